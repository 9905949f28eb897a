//! The scenarios of the report, one file each, and what they share: the systems under test and
//! how to open one client of each.

pub mod contention;
pub mod counted;
pub mod crash;
pub mod election;
pub mod failover;
pub mod herd;
pub mod holding;
mod kinds;
pub mod latency;
mod latency_turns;
pub mod many;
pub mod shared;
pub mod waiting;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lock_core::LockName;
use lock_testkit::servers::ZkServer;

use crate::BenchResult;
use crate::contend::{Contender, DistlockContender};
use crate::peers::mysql_kill_floor::KillRelay;
use crate::peers::pg_fenced_floor::PgFencedFloor;
use crate::peers::pg_floor::PgFloor;
use crate::peers::pg_notify_floor::NotifyRelay;
use crate::peers::redis_handoff_floor::PublishRelay;
use crate::peers::redis_poll::{Fencing, RedisPollLock};
use crate::peers::redis_script_floor::RedisScriptFloor;
use crate::peers::rslock_peer::RsLock;
use crate::peers::zk_floor::ZkFloor;
use crate::peers::zk_node_floor::ZkNodeFloor;
use crate::peers::zk_recipe_floor::ZkRecipeFloor;
use crate::peers::{mysql, mysql_statement_floor, pg, pg_statement_floor};
use crate::record::Record;
use crate::servers::{Servers, host_port};

pub use kinds::{
    BACKENDS, Kind, REDIS_CLUSTER, ROLE_LIBRARY, ROLE_OURS, RedisFence, SWEPT_BACKENDS, all_kinds,
};

/// What a scenario needs: the servers, the run's size, and where results go.
#[derive(Debug)]
pub struct Ctx {
    /// The servers of the run.
    pub servers: Servers,
    /// `--quick`: shorter runs and fewer points.
    pub quick: bool,
    /// Results so far.
    pub records: Vec<Record>,
    /// Scenarios or systems that could not run, and why.
    pub skipped: Vec<String>,
    /// `--backends`: the latency and contention scenarios run only the systems on these
    /// backends (all when `None`).
    pub backends: Option<Vec<String>>,
}

impl Ctx {
    /// `quick` if the run is quick, else `full`.
    pub fn pick<T>(&self, quick: T, full: T) -> T {
        if self.quick { quick } else { full }
    }

    /// Records a result, printing it as it comes.
    pub fn push(&mut self, record: Record) {
        println!("{}", record.to_line());
        self.records.push(record);
    }

    /// Notes something that could not run.
    pub fn skip(&mut self, what: impl Into<String>) {
        let what = what.into();
        eprintln!("skipped: {what}");
        self.skipped.push(what);
    }

    /// Whether `--backends` lets the latency and contention scenarios run systems on `backend`.
    pub fn wants(&self, backend: &str) -> bool {
        self.backends
            .as_ref()
            .is_none_or(|only| only.iter().any(|b| b == backend))
    }

    /// The systems of the latency and contention scenarios ([`all_kinds`]) that `--backends`
    /// lets through and whose server runs: the Redis Cluster only once it was started.
    pub fn kinds(&self) -> Vec<Kind> {
        all_kinds()
            .into_iter()
            .filter(|kind| self.wants(kind.backend()))
            .filter(|kind| kind.backend() != REDIS_CLUSTER || self.servers.redis_cluster.is_some())
            .collect()
    }
}

/// A ZooKeeper with a 200 ms tick, so sessions can be as short as 400 ms (ZooKeeper clamps them
/// to 2..20 ticks), and its URL; an external ZooKeeper (`LOCK_TEST_ZOOKEEPER_URL`) is used as
/// it is. Keep the server (if any) for as long as the URL is used.
///
/// # Errors
///
/// The server did not start.
pub fn short_tick_zookeeper(ctx: &Ctx) -> BenchResult<(Option<ZkServer>, String)> {
    let zk = match lock_testkit::servers::external_url("ZOOKEEPER") {
        Some(_) => None,
        None => Some(ZkServer::start_with_tick(Duration::from_millis(200))?),
    };
    let url = zk
        .as_ref()
        .map_or_else(|| ctx.servers.zookeeper.clone(), ZkServer::url);
    Ok((zk, url))
}

/// A fresh lock name for one run.
pub fn fresh_name(scenario: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("bench/{scenario}/{n}-{:08x}", rand::random::<u32>())
}

/// The distlock URL of `backend` with small per-client pools for the SQL servers.
pub fn distlock_url(servers: &Servers, backend: &str) -> String {
    let url = servers.url(backend);
    match backend {
        "postgres" | "mysql" => format!("{url}?pool_size=2"),
        _ => url,
    }
}

/// Opens one independent client (own connection or session) of `kind` for lock `name`.
///
/// # Cancel safety
///
/// Cancel safe: dropping it closes the connection it was opening.
///
/// # Errors
///
/// The connection's error.
pub async fn client(kind: Kind, servers: &Servers, name: &str) -> BenchResult<Arc<dyn Contender>> {
    Ok(match kind {
        Kind::Distlock(backend) => {
            let lock = distlock::connect(&distlock_url(servers, backend)).await?;
            Arc::new(DistlockContender::new(lock, &LockName::new(name)?))
        }
        Kind::RedisPoll(ms) => {
            Arc::new(RedisPollLock::connect(&servers.redis, name, Duration::from_millis(ms)).await?)
        }
        Kind::RedisFencedFloor(fence) => {
            let fencing = match fence {
                RedisFence::Script => Fencing::script(),
                RedisFence::Transaction => Fencing::Transaction,
                RedisFence::Clocked => Fencing::clocked(),
            };
            let poll = Duration::from_millis(1);
            Arc::new(RedisPollLock::connect_fenced(&servers.redis, name, poll, fencing).await?)
        }
        Kind::RsLock => Arc::new(RsLock::new(&servers.redis, name)),
        Kind::RedisScriptFloor => Arc::new(RedisScriptFloor::connect(&servers.redis, name).await?),
        Kind::RedisHandoffFloor => Arc::new(PublishRelay::connect(&servers.redis, name).await?),
        Kind::PgRow(ms) => {
            pg::ensure_table(&servers.postgres).await?;
            Arc::new(
                pg::PgRowLock::connect(&servers.postgres, name, Duration::from_millis(ms)).await?,
            )
        }
        Kind::PgAdvisory => {
            Arc::new(pg::PgAdvisoryLock::connect(&servers.postgres, advisory_key(name)).await?)
        }
        Kind::PgFloor => {
            pg::ensure_table(&servers.postgres).await?;
            Arc::new(PgFloor::connect(&servers.postgres, name).await?)
        }
        Kind::PgFencedFloor => Arc::new(PgFencedFloor::connect(&servers.postgres, name).await?),
        Kind::PgStatementFloor => {
            Arc::new(pg_statement_floor::connect(&servers.postgres, name).await?)
        }
        Kind::PgNotifyFloor => Arc::new(NotifyRelay::connect(&servers.postgres, name).await?),
        Kind::ZkFloor => {
            let (host, port) = host_port(&servers.zookeeper).ok_or("no ZooKeeper port")?;
            let path = format!("/floor-bench/{}", name.replace('/', "-"));
            Arc::new(ZkFloor::connect(&format!("{host}:{port}"), &path).await?)
        }
        Kind::ZkRecipeFloor => {
            let (host, port) = host_port(&servers.zookeeper).ok_or("no ZooKeeper port")?;
            let parent = format!("/recipe-floor-bench/{}", name.replace('/', "-"));
            Arc::new(ZkRecipeFloor::connect(&format!("{host}:{port}"), &parent).await?)
        }
        Kind::ZkNodeFloor => {
            let (host, port) = host_port(&servers.zookeeper).ok_or("no ZooKeeper port")?;
            let parent = format!("/node-floor-bench/{}", name.replace('/', "-"));
            Arc::new(ZkNodeFloor::connect(&format!("{host}:{port}"), &parent).await?)
        }
        Kind::MySqlGetLock => {
            let key = format!("bench-{:016x}", advisory_key(name));
            Arc::new(mysql::GetLock::connect(&servers.mysql, &key).await?)
        }
        Kind::MySqlRow(ms) => {
            mysql::ensure_table(&servers.mysql).await?;
            let interval = Duration::from_millis(ms);
            Arc::new(mysql::MySqlRowLock::connect(&servers.mysql, name, interval).await?)
        }
        Kind::MySqlStatementFloor => {
            Arc::new(mysql_statement_floor::connect(&servers.mysql, name).await?)
        }
        Kind::MySqlKillFloor => Arc::new(KillRelay::connect(&servers.mysql, name).await?),
        Kind::MySqlFencedFloor => Arc::new(KillRelay::connect_fenced(&servers.mysql, name).await?),
    })
}

/// A stable advisory-lock key for a name (FNV-1a), so every client of a name shares it.
pub fn advisory_key(name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash >> 1) as i64
}

/// Opens `count` clients of `kind` for `name`.
///
/// # Cancel safety
///
/// Cancel safe: dropping it closes the connections it opened.
///
/// # Errors
///
/// As [`client`].
pub async fn clients(
    kind: Kind,
    servers: &Servers,
    name: &str,
    count: usize,
) -> BenchResult<Vec<Arc<dyn Contender>>> {
    let mut opened = Vec::with_capacity(count);
    for _ in 0..count {
        opened.push(client(kind, servers, name).await?);
    }
    Ok(opened)
}

/// The run's parameters for the report header (the same choices the scenarios make).
pub fn parameters(quick: bool) -> serde_json::Value {
    let pick = |q: serde_json::Value, f: serde_json::Value| if quick { q } else { f };
    serde_json::json!({
        "mode": if quick { "quick" } else { "full" },
        "latency_seconds_per_system": pick(0.5.into(), 8.0.into()),
        "latency_warmup_seconds": 0.7,
        "latency_rounds": pick(1.into(), 8.into()),
        "contention_seconds_per_point": pick(0.5.into(), 2.0.into()),
        "contention_rounds": pick(1.into(), contention::ROUNDS.into()),
        "contention_warmup_seconds": contention::WARMUP.as_secs_f64(),
        "contention_clients": contention::counts(quick),
        "critical_section": "one scheduler yield (herd: 1 ms sleep)",
        "waiting_waiters": pick(8.into(), 16.into()),
        "waiting_window_seconds": pick(2.into(), 5.into()),
        "herd_waiters": pick(serde_json::json!([8, 32]), serde_json::json!([8, 32, 128])),
        "herd_seconds": pick(1.0.into(), 3.0.into()),
        "crash_trials": pick(1.into(), 3.into()),
        "election_trials": pick(2.into(), 5.into()),
        "election_lease_ms": 2000,
        "failover_trials_redis": pick(1.into(), 5.into()),
        "failover_trials_zookeeper": pick(1.into(), 3.into()),
        "many_counts": many::counts(quick),
        "many_lease_ms": many::window(quick).lease.as_millis() as u64,
        "many_hold_periods": many::window(quick).periods,
        "many_settle_periods": many::SETTLE_PERIODS,
        "many_reach_seconds": many::window(quick).reach.as_secs(),
        "redis_cluster": format!(
            "{} primaries with {} replica each on loopback, distlock through redis+cluster:// \
             (every key of a lock on one shard)",
            crate::servers::CLUSTER_PRIMARIES,
            crate::servers::CLUSTER_REPLICAS
        ),
        "distlock_options": "AcquireOptions::default(): wait forever, 30 s lease renewed at 1/3; SQL pools of 2 per client",
        "peer_lease": "30 s (rslock TTL, SET PX, row expires_at)",
        "rslock_retry": "defaults (3 tries, random 0..200 ms delay), looped by acquire_no_guard",
    })
}
