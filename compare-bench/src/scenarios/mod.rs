//! The scenarios of the report, one file each, and what they share: the systems under test and
//! how to open one client of each.

pub mod contention;
pub mod counted;
pub mod crash;
pub mod election;
pub mod failover;
pub mod herd;
pub mod holding;
pub mod latency;
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
use crate::machine::crate_versions;
use crate::peers::pg_floor::PgFloor;
use crate::peers::pg_notify_floor::NotifyRelay;
use crate::peers::pg_statement_floor::PgStatementFloor;
use crate::peers::redis_handoff_floor::PublishRelay;
use crate::peers::redis_script_floor::RedisScriptFloor;
use crate::peers::zk_floor::ZkFloor;
use crate::peers::{mysql, pg, redis_poll::RedisPollLock, rslock_peer::RsLock};
use crate::record::Record;
use crate::servers::{Servers, host_port};

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

/// A lock implementation under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// distlock over one backend (`memory`, `sqlite`, `postgres`, `mysql`, `redis`,
    /// `redis-cluster`, `zookeeper`).
    Distlock(&'static str),
    /// Hand-written Redis `SET NX PX` + Lua release, polling every this many milliseconds.
    RedisPoll(u64),
    /// The rslock crate on one Redis.
    RsLock,
    /// The floor of distlock's Redis scripts: lock-redis's acquire and release scripts sent by a
    /// bare client, uncontended only.
    RedisScriptFloor,
    /// The Redis handoff floor: a `PUBLISH` on the next waiter's own channel, each client
    /// subscribed on a connection of its own; contended only.
    RedisHandoffFloor,
    /// Hand-written PostgreSQL unique-row lock, polling every this many milliseconds.
    PgRow(u64),
    /// PostgreSQL `pg_advisory_lock`.
    PgAdvisory,
    /// The PostgreSQL floor: one `INSERT` and one `DELETE`, uncontended only.
    PgFloor,
    /// The floor of distlock's PostgreSQL statements: lock-sql's acquire and release
    /// statements sent by a bare client, uncontended only.
    PgStatementFloor,
    /// The PostgreSQL handoff floor: a `pg_notify` naming the next waiter, each client
    /// listening on a connection of its own; contended only.
    PgNotifyFloor,
    /// The ZooKeeper floor: create an ephemeral node and delete it, uncontended only.
    ZkFloor,
    /// MySQL/MariaDB `GET_LOCK` and `RELEASE_LOCK`.
    MySqlGetLock,
    /// Hand-written MySQL/MariaDB unique-row lock, polling every this many milliseconds.
    MySqlRow(u64),
}

impl Kind {
    /// The `system` label: library and version.
    pub fn system(self) -> String {
        match self {
            Kind::Distlock(_) => format!("distlock {}", env!("CARGO_PKG_VERSION")),
            Kind::RedisPoll(ms) => format!("SET NX PX + EVALSHA, {ms} ms poll"),
            Kind::RsLock => format!("rslock {}", crate_versions("rslock").join("/")),
            Kind::RedisScriptFloor => "acquire.lua/release.lua floor, bare EVALSHA".to_owned(),
            Kind::RedisHandoffFloor => "PUBLISH handoff floor, a channel per client".to_owned(),
            Kind::PgRow(ms) => format!("INSERT ON CONFLICT/DELETE, {ms} ms poll"),
            Kind::PgAdvisory => "pg_advisory_lock".to_owned(),
            Kind::PgFloor => "INSERT/DELETE floor, no polling".to_owned(),
            Kind::PgStatementFloor => {
                "acquire_first.sql/release.sql floor, one connection".to_owned()
            }
            Kind::PgNotifyFloor => "pg_notify handoff floor, a listener per client".to_owned(),
            Kind::ZkFloor => format!(
                "create+delete floor, zookeeper-client {}",
                crate_versions("zookeeper-client").join("/")
            ),
            Kind::MySqlGetLock => "GET_LOCK/RELEASE_LOCK".to_owned(),
            Kind::MySqlRow(ms) => format!("INSERT IGNORE/DELETE, {ms} ms poll"),
        }
    }

    /// What the system is, for a reader of the report: the product, a lock library, a lock
    /// written by hand on the server's primitives, or a floor (the same server work as a lock
    /// with no lock around it, which no lock can beat).
    pub fn role(self) -> &'static str {
        match self {
            Kind::Distlock(_) => ROLE_OURS,
            Kind::RsLock => ROLE_LIBRARY,
            Kind::RedisPoll(_) | Kind::PgRow(_) | Kind::MySqlRow(_) => "hand-written lock",
            Kind::PgAdvisory | Kind::MySqlGetLock => "server's built-in lock",
            Kind::PgFloor
            | Kind::PgStatementFloor
            | Kind::ZkFloor
            | Kind::PgNotifyFloor
            | Kind::RedisScriptFloor
            | Kind::RedisHandoffFloor => "floor (no lock semantics)",
        }
    }

    /// Whether it takes part in the contention sweep: the uncontended floors cannot wait.
    pub fn contends(self) -> bool {
        !matches!(
            self,
            Kind::PgFloor | Kind::PgStatementFloor | Kind::ZkFloor | Kind::RedisScriptFloor
        )
    }

    /// Whether it takes part in the uncontended latency scenario: the handoff floor does
    /// nothing on the server without a waiter.
    pub fn uncontended(self) -> bool {
        !matches!(self, Kind::PgNotifyFloor | Kind::RedisHandoffFloor)
    }

    /// The server it runs on.
    pub fn backend(self) -> &'static str {
        match self {
            Kind::Distlock(backend) => backend,
            Kind::RedisPoll(_)
            | Kind::RsLock
            | Kind::RedisScriptFloor
            | Kind::RedisHandoffFloor => "redis",
            Kind::PgRow(_)
            | Kind::PgAdvisory
            | Kind::PgFloor
            | Kind::PgStatementFloor
            | Kind::PgNotifyFloor => "postgres",
            Kind::MySqlGetLock | Kind::MySqlRow(_) => "mysql",
            Kind::ZkFloor => "zookeeper",
        }
    }
}

/// The [`Kind::role`] of distlock.
pub const ROLE_OURS: &str = "distlock";

/// The [`Kind::role`] of a lock library (Curator too).
pub const ROLE_LIBRARY: &str = "library";

/// The distlock backends, in report order.
pub const BACKENDS: [&str; 6] = [
    "memory",
    "sqlite",
    "postgres",
    "mysql",
    "redis",
    "zookeeper",
];

/// distlock through `redis+cluster://` on a Redis Cluster of
/// [`CLUSTER_PRIMARIES`](crate::servers::CLUSTER_PRIMARIES) shards: a backend of the latency and
/// contention scenarios only, beside single Redis.
pub const REDIS_CLUSTER: &str = "redis-cluster";

/// The distlock backends of the latency and contention scenarios and of the headline, in report
/// order: [`BACKENDS`] with the Redis Cluster after single Redis.
pub const SWEPT_BACKENDS: [&str; 7] = [
    "memory",
    "sqlite",
    "postgres",
    "mysql",
    "redis",
    REDIS_CLUSTER,
    "zookeeper",
];

/// Every system of the latency and contention scenarios except Curator (a JVM, run apart).
pub fn all_kinds() -> Vec<Kind> {
    let mut kinds: Vec<Kind> = SWEPT_BACKENDS.iter().map(|b| Kind::Distlock(b)).collect();
    kinds.extend([
        Kind::RedisPoll(1),
        Kind::RsLock,
        Kind::RedisScriptFloor,
        Kind::RedisHandoffFloor,
        Kind::PgRow(1),
        Kind::PgAdvisory,
        Kind::PgFloor,
        Kind::PgStatementFloor,
        Kind::PgNotifyFloor,
        Kind::MySqlGetLock,
        Kind::MySqlRow(1),
        Kind::ZkFloor,
    ]);
    kinds
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
        Kind::PgStatementFloor => {
            Arc::new(PgStatementFloor::connect(&servers.postgres, name).await?)
        }
        Kind::PgNotifyFloor => Arc::new(NotifyRelay::connect(&servers.postgres, name).await?),
        Kind::ZkFloor => {
            let (host, port) = host_port(&servers.zookeeper).ok_or("no ZooKeeper port")?;
            let path = format!("/floor-bench/{}", name.replace('/', "-"));
            Arc::new(ZkFloor::connect(&format!("{host}:{port}"), &path).await?)
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
        "latency_seconds_per_system": pick(0.5.into(), 3.0.into()),
        "latency_warmup_seconds": 0.7,
        "latency_rounds": pick(1.into(), 3.into()),
        "contention_seconds_per_point": pick(0.5.into(), 2.0.into()),
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
