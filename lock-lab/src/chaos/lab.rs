//! The servers a chaos run uses, started on first need and kept for the run.

use std::path::PathBuf;
use std::time::Duration;

use super::Backend;
use super::clock::FakeClock;
use lock_testkit::servers::{MariaDbServer, PostgresServer, RedisServer, ZkEnsemble, ZkServer};

/// ZooKeeper's tick for the standalone server: sessions may be 0.4 s to 4 s.
const ZK_TICK: Duration = Duration::from_millis(200);

/// Every server of a run, and the holder program its trials start.
#[derive(Debug, Default)]
pub(crate) struct Lab {
    pub(crate) holder: PathBuf,
    /// The `lockrun` program, when built beside the chaos program.
    pub(crate) lockrun: Option<PathBuf>,
    /// Servers whose wall clock trials step, each with its clock.
    faked_postgres: Option<(FakeClock, PostgresServer)>,
    faked_mysql: Option<(FakeClock, MariaDbServer)>,
    faked_zookeeper: Option<(FakeClock, ZkServer)>,
    sqlite: Option<tempfile::TempDir>,
    postgres: Option<PostgresServer>,
    mysql: Option<MariaDbServer>,
    redis: Option<RedisServer>,
    redis_pair: Option<(RedisServer, RedisServer)>,
    redlock: Vec<RedisServer>,
    zookeeper: Option<ZkServer>,
    ensemble: Option<ZkEnsemble>,
}

/// The lease (or ZooKeeper session) every holder asks for.
pub(crate) const LEASE: Duration = Duration::from_millis(800);

type Started<T> = Result<T, String>;

fn started<T>(server: Result<T, lock_testkit::ServerError>) -> Started<T> {
    server.map_err(|error| error.to_string())
}

impl Lab {
    /// A lab whose trials start the holder program at `holder` (and `lockrun`, if given).
    pub(crate) fn new(holder: PathBuf, lockrun: Option<PathBuf>) -> Self {
        Self {
            holder,
            lockrun,
            ..Self::default()
        }
    }

    /// The URL of `backend`'s server whose wall clock can be stepped, and its clock.
    pub(crate) fn faked(&mut self, backend: Backend) -> Started<(String, &mut FakeClock)> {
        match backend {
            Backend::Postgres => {
                if self.faked_postgres.is_none() {
                    let clock = FakeClock::new()?;
                    let server = started(PostgresServer::start_with_env(&clock.env()))?;
                    self.faked_postgres = Some((clock, server));
                }
                let (clock, server) = self.faked_postgres.as_mut().ok_or_else(String::new)?;
                Ok((server.url(), clock))
            }
            Backend::Mysql => {
                if self.faked_mysql.is_none() {
                    let clock = FakeClock::new()?;
                    let server = started(MariaDbServer::start_with_env(&clock.env()))?;
                    self.faked_mysql = Some((clock, server));
                }
                let (clock, server) = self.faked_mysql.as_mut().ok_or_else(String::new)?;
                Ok((server.url(), clock))
            }
            Backend::Zookeeper => {
                if self.faked_zookeeper.is_none() {
                    let clock = FakeClock::new()?;
                    let server = started(ZkServer::start_with_tick_and_env(ZK_TICK, &clock.env()))?;
                    self.faked_zookeeper = Some((clock, server));
                }
                let (clock, server) = self.faked_zookeeper.as_mut().ok_or_else(String::new)?;
                Ok((zk_url(&server.connect_string(), LEASE), clock))
            }
            other => Err(format!("no server with a faked clock for {}", other.id())),
        }
    }

    /// Stops the servers with a faked clock: their clocks stay ahead for good, so they serve
    /// only the clock-step cell.
    pub(crate) fn stop_faked(&mut self) {
        self.faked_postgres = None;
        self.faked_mysql = None;
        self.faked_zookeeper = None;
    }

    /// The URL a holder uses for `backend`, starting its servers if needed.
    pub(crate) fn url(&mut self, backend: Backend) -> Started<String> {
        Ok(match backend {
            Backend::Sqlite => {
                if self.sqlite.is_none() {
                    self.sqlite = Some(tempfile::tempdir().map_err(|e| e.to_string())?);
                }
                let dir = self.sqlite.as_ref().map(|d| d.path().join("locks.db"));
                format!("sqlite://{}", dir.unwrap_or_default().display())
            }
            Backend::Postgres => self.postgres()?.url(),
            Backend::Mysql => self.mysql()?.url(),
            Backend::Redis => self.redis()?.url(),
            Backend::RedisWait => with_wait(&self.redis_pair()?.0.url()),
            Backend::Redlock => self
                .redlock()?
                .iter()
                .map(RedisServer::url)
                .collect::<Vec<_>>()
                .join(","),
            Backend::Zookeeper => zk_url(&self.zookeeper()?.connect_string(), LEASE),
            // Each failover trial starts a deployment of its own (see `chaos::failover`).
            other => return Err(failover_only(other)),
        })
    }

    pub(crate) fn postgres(&mut self) -> Started<&mut PostgresServer> {
        if self.postgres.is_none() {
            self.postgres = Some(started(PostgresServer::start())?);
        }
        self.postgres.as_mut().ok_or_else(String::new)
    }

    pub(crate) fn mysql(&mut self) -> Started<&mut MariaDbServer> {
        if self.mysql.is_none() {
            self.mysql = Some(started(MariaDbServer::start())?);
        }
        self.mysql.as_mut().ok_or_else(String::new)
    }

    pub(crate) fn redis(&mut self) -> Started<&mut RedisServer> {
        if self.redis.is_none() {
            self.redis = Some(started(RedisServer::start())?);
        }
        self.redis.as_mut().ok_or_else(String::new)
    }

    /// A master and a replica in sync (for `wait_for_replicas`).
    pub(crate) fn redis_pair(&mut self) -> Started<&mut (RedisServer, RedisServer)> {
        if self.redis_pair.is_none() {
            self.redis_pair = Some(master_and_replica()?);
        }
        self.redis_pair.as_mut().ok_or_else(String::new)
    }

    pub(crate) fn redlock(&mut self) -> Started<&mut [RedisServer]> {
        while self.redlock.len() < 3 {
            self.redlock.push(started(RedisServer::start())?);
        }
        Ok(&mut self.redlock)
    }

    pub(crate) fn zookeeper(&mut self) -> Started<&mut ZkServer> {
        if self.zookeeper.is_none() {
            self.zookeeper = Some(started(ZkServer::start_with_tick(ZK_TICK))?);
        }
        self.zookeeper.as_mut().ok_or_else(String::new)
    }

    pub(crate) fn ensemble(&mut self) -> Started<&mut ZkEnsemble> {
        if self.ensemble.is_none() {
            self.ensemble = Some(started(ZkEnsemble::start(3))?);
        }
        self.ensemble.as_mut().ok_or_else(String::new)
    }
}

/// Why `backend` has no shared server: it runs in the failover scenario only.
pub(crate) fn failover_only(backend: Backend) -> String {
    format!("{} runs in the failover scenario only", backend.id())
}

/// `zk://HOSTS?session_timeout=...`.
pub(crate) fn zk_url(hosts: &str, session: Duration) -> String {
    format!("zk://{hosts}?session_timeout={}ms", session.as_millis())
}

/// A fresh Redis master and a replica in sync with it.
pub(crate) fn master_and_replica() -> Started<(RedisServer, RedisServer)> {
    let master = started(RedisServer::start())?;
    let replica = started(RedisServer::start_replica_of(&master))?;
    Ok((master, replica))
}

/// `url` with its port `from` replaced by `to` (to route a holder through a fault proxy).
/// A Redis URL whose grants one replica must acknowledge within 300 ms.
pub(crate) fn with_wait(url: &str) -> String {
    format!("{url}?wait_replicas=1&wait_timeout=300ms")
}

pub(crate) fn via_port(url: &str, from: u16, to: u16) -> String {
    url.replacen(&format!(":{from}"), &format!(":{to}"), 1)
}
