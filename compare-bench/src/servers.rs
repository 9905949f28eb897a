//! The servers a run measures: spawned with lock-testkit, or taken from `LOCK_TEST_<BACKEND>_URL`.

use lock_testkit::servers::{MariaDbServer, PostgresServer, RedisServer, ZkServer, external_url};

use crate::BenchResult;

/// One server: either spawned here (and killed when dropped) or external.
#[derive(Debug)]
enum Running<T> {
    Spawned(T),
    External,
}

/// Every server of the run and its URL.
#[derive(Debug)]
pub struct Servers {
    _redis: Running<RedisServer>,
    _zookeeper: Running<ZkServer>,
    _postgres: Running<PostgresServer>,
    _mysql: Running<MariaDbServer>,
    _sqlite_dir: tempfile::TempDir,
    /// `redis://host:port`.
    pub redis: String,
    /// `zk://host:port`.
    pub zookeeper: String,
    /// `postgres://...`.
    pub postgres: String,
    /// `mysql://.../distlock`.
    pub mysql: String,
    /// `sqlite://PATH` of a database file in a temp dir.
    pub sqlite: String,
}

fn start<T>(
    backend: &str,
    spawn: impl FnOnce() -> Result<T, lock_testkit::ServerError>,
    url: impl FnOnce(&T) -> String,
) -> BenchResult<(Running<T>, String)> {
    if let Some(url) = external_url(backend) {
        return Ok((Running::External, url));
    }
    let server = spawn()?;
    let url = url(&server);
    Ok((Running::Spawned(server), url))
}

impl Servers {
    /// Starts (or finds) Redis, ZooKeeper, PostgreSQL and MariaDB, and makes a SQLite file.
    ///
    /// # Errors
    ///
    /// A server that is missing or does not start.
    pub fn start() -> BenchResult<Self> {
        let (redis_server, redis) = start("REDIS", RedisServer::start, RedisServer::url)?;
        let (zk_server, zookeeper) = start("ZOOKEEPER", ZkServer::start, ZkServer::url)?;
        let (pg_server, postgres) = start("POSTGRES", PostgresServer::start, PostgresServer::url)?;
        let (my_server, mysql) = start("MYSQL", MariaDbServer::start, MariaDbServer::url)?;
        let dir = tempfile::tempdir()?;
        let sqlite = format!("sqlite://{}", dir.path().join("locks.db").display());
        Ok(Self {
            _redis: redis_server,
            _zookeeper: zk_server,
            _postgres: pg_server,
            _mysql: my_server,
            _sqlite_dir: dir,
            redis,
            zookeeper,
            postgres,
            mysql,
            sqlite,
        })
    }

    /// The URL of `backend` (`redis`, `zookeeper`, `postgres`, `mysql`, `sqlite`, `memory`).
    pub fn url(&self, backend: &str) -> String {
        match backend {
            "redis" => self.redis.clone(),
            "zookeeper" => self.zookeeper.clone(),
            "postgres" => self.postgres.clone(),
            "mysql" => self.mysql.clone(),
            "sqlite" => self.sqlite.clone(),
            _ => "memory://compare-bench".to_owned(),
        }
    }
}

/// `host:port` of a URL like `scheme://[user@]host:port[/path][?query]`.
pub fn host_port(url: &str) -> Option<(String, u16)> {
    let rest = url.split_once("://")?.1;
    let rest = rest.split(['/', '?']).next()?;
    let rest = rest.rsplit_once('@').map_or(rest, |(_, hosts)| hosts);
    let first = rest.split(',').next()?;
    let (host, port) = first.rsplit_once(':')?;
    Some((host.to_owned(), port.parse().ok()?))
}
