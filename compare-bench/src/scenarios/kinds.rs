//! The systems under test: distlock on each backend, the peers it is compared with, and the
//! floors, with the names, roles and servers the report gives them.

use crate::machine::crate_versions;

/// A lock implementation under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// distlock over one backend (`memory`, `sqlite`, `postgres`, `mysql`, `redis`,
    /// `redis-cluster`, `zookeeper`).
    Distlock(&'static str),
    /// Hand-written Redis `SET NX PX` + Lua release, polling every this many milliseconds.
    RedisPoll(u64),
    /// The least fenced Redis lock: `SET NX PX` and a count of the fence in one step (one script,
    /// or one `MULTI`/`EXEC`, or one script that also keeps arrival order and floors the fence
    /// at the server clock as distlock does), and the compare-and-delete release; uncontended
    /// only.
    RedisFencedFloor(RedisFence),
    /// The rslock crate on one Redis.
    RsLock,
    /// The floor of distlock's Redis scripts: lock-redis's acquire and release scripts sent by a
    /// bare client, which waits for its grant on an inbox of its own as distlock does.
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
    /// The least fenced PostgreSQL lock: [`Kind::PgFloor`] whose insert also takes the next
    /// value of a sequence as the fence; uncontended only.
    PgFencedFloor,
    /// The floor of distlock's PostgreSQL statements: lock-sql's acquire and release
    /// statements sent by a bare client, which waits in line on a listener as distlock does.
    PgStatementFloor,
    /// The PostgreSQL handoff floor: a `pg_notify` naming the next waiter, each client
    /// listening on a connection of its own; contended only.
    PgNotifyFloor,
    /// The ZooKeeper floor: create an ephemeral node and delete it, uncontended only.
    ZkFloor,
    /// The ZooKeeper recipe floor: create an ephemeral sequential node, list the parent in the
    /// same round trip, watch the node ahead while there is one, delete the node.
    ZkRecipeFloor,
    /// The ZooKeeper node floor: create the node distlock creates (sequential, `_c_<uuid>-`
    /// name, owner label) and delete it, uncontended only.
    ZkNodeFloor,
    /// MySQL/MariaDB `GET_LOCK` and `RELEASE_LOCK`.
    MySqlGetLock,
    /// Hand-written MySQL/MariaDB unique-row lock, polling every this many milliseconds.
    MySqlRow(u64),
    /// The floor of distlock's MySQL/MariaDB statements: lock-sql's acquire and release
    /// statements sent by a bare client, waiting as distlock does (entry, default backoff).
    MySqlStatementFloor,
    /// The MySQL/MariaDB handoff floor: a `KILL QUERY` of the next waiter's parked connection,
    /// each client parked in `GET_LOCK` on a connection of its own; contended only.
    MySqlKillFloor,
    /// The MySQL/MariaDB fenced handoff floor: [`Kind::MySqlKillFloor`] whose every grant also
    /// writes the lock row (a new fence, owner and lease) in one `UPDATE`, the least any fenced
    /// table lock writes; uncontended, a grant and a release are one `UPDATE` each.
    MySqlFencedFloor,
}

/// How the least fenced Redis lock counts a grant's fence in the step that grants it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedisFence {
    /// One script.
    Script,
    /// One `MULTI`/`EXEC`.
    Transaction,
    /// One script that serves waiters first (it refuses while a waiter queue exists) and floors
    /// the fence at the server clock, as distlock's scripts do.
    Clocked,
}

impl Kind {
    /// The `system` label: library and version.
    pub fn system(self) -> String {
        match self {
            Kind::Distlock(_) => format!("distlock {}", env!("CARGO_PKG_VERSION")),
            Kind::RedisPoll(ms) => format!("SET NX PX + EVALSHA, {ms} ms poll"),
            Kind::RedisFencedFloor(RedisFence::Script) => {
                "least-fenced floor, script: one EVALSHA sets if absent and counts the fence, \
                 compare-and-delete EVALSHA"
                    .to_owned()
            }
            Kind::RedisFencedFloor(RedisFence::Transaction) => {
                "least-fenced floor, MULTI/EXEC: SET if absent and INCR the fence, \
                 compare-and-delete EVALSHA"
                    .to_owned()
            }
            Kind::RedisFencedFloor(RedisFence::Clocked) => {
                "least FIFO-fenced floor, script: one EVALSHA refuses while a queue exists, sets \
                 if absent and takes a clock-floored fence, compare-and-delete EVALSHA that reads \
                 the queue"
                    .to_owned()
            }
            Kind::RsLock => format!("rslock {}", crate_versions("rslock").join("/")),
            Kind::RedisScriptFloor => "acquire.lua/release.lua floor, bare EVALSHA".to_owned(),
            Kind::RedisHandoffFloor => "PUBLISH handoff floor, a channel per client".to_owned(),
            Kind::PgRow(ms) => format!("INSERT ON CONFLICT/DELETE, {ms} ms poll"),
            Kind::PgAdvisory => "pg_advisory_lock".to_owned(),
            Kind::PgFloor => "INSERT/DELETE floor, no polling".to_owned(),
            Kind::PgFencedFloor => "least-fenced floor, nextval: one statement adds the holder \
                 with the next sequence value, one removes it"
                .to_owned(),
            Kind::PgStatementFloor => {
                "take_row.sql/release_alone.sql floor, one connection, in line on a listener"
                    .to_owned()
            }
            Kind::PgNotifyFloor => "pg_notify handoff floor, a listener per client".to_owned(),
            Kind::MySqlKillFloor => {
                "KILL QUERY handoff floor, a parked connection per client".to_owned()
            }
            Kind::MySqlFencedFloor => {
                "least-fenced floor, woken by KILL QUERY: one UPDATE per grant, a parked \
                 connection per client"
                    .to_owned()
            }
            Kind::ZkFloor => format!(
                "create+delete floor, zookeeper-client {}",
                crate_versions("zookeeper-client").join("/")
            ),
            Kind::ZkRecipeFloor => format!(
                "create+list+delete recipe floor, zookeeper-client {}",
                crate_versions("zookeeper-client").join("/")
            ),
            Kind::ZkNodeFloor => format!(
                "sequential _c_<uuid>- labelled node floor, zookeeper-client {}",
                crate_versions("zookeeper-client").join("/")
            ),
            Kind::MySqlGetLock => "GET_LOCK/RELEASE_LOCK".to_owned(),
            Kind::MySqlRow(ms) => format!("INSERT IGNORE/DELETE, {ms} ms poll"),
            Kind::MySqlStatementFloor => {
                "acquire.sql/release.sql floor, one connection, parked in line, woken by KILL QUERY"
                    .to_owned()
            }
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
            | Kind::PgFencedFloor
            | Kind::PgStatementFloor
            | Kind::MySqlStatementFloor
            | Kind::ZkFloor
            | Kind::ZkRecipeFloor
            | Kind::ZkNodeFloor
            | Kind::PgNotifyFloor
            | Kind::MySqlKillFloor
            | Kind::MySqlFencedFloor
            | Kind::RedisFencedFloor(_)
            | Kind::RedisScriptFloor
            | Kind::RedisHandoffFloor => "floor (no lock semantics)",
        }
    }

    /// Whether it takes part in the contention sweep: the uncontended floors cannot wait.
    pub fn contends(self) -> bool {
        !matches!(
            self,
            Kind::PgFloor
                | Kind::PgFencedFloor
                | Kind::ZkFloor
                | Kind::ZkNodeFloor
                | Kind::RedisFencedFloor(_)
        )
    }

    /// Whether it takes part in the uncontended latency scenario: the bare handoff floors do
    /// nothing on the server without a waiter (the fenced one writes its row at each grant and
    /// release, the least fenced lock's pair).
    pub fn uncontended(self) -> bool {
        !matches!(
            self,
            Kind::PgNotifyFloor | Kind::RedisHandoffFloor | Kind::MySqlKillFloor
        )
    }

    /// The server it runs on.
    pub fn backend(self) -> &'static str {
        match self {
            Kind::Distlock(backend) => backend,
            Kind::RedisPoll(_)
            | Kind::RedisFencedFloor(_)
            | Kind::RsLock
            | Kind::RedisScriptFloor
            | Kind::RedisHandoffFloor => "redis",
            Kind::PgRow(_)
            | Kind::PgAdvisory
            | Kind::PgFloor
            | Kind::PgFencedFloor
            | Kind::PgStatementFloor
            | Kind::PgNotifyFloor => "postgres",
            Kind::MySqlGetLock
            | Kind::MySqlRow(_)
            | Kind::MySqlStatementFloor
            | Kind::MySqlKillFloor
            | Kind::MySqlFencedFloor => "mysql",
            Kind::ZkFloor | Kind::ZkRecipeFloor | Kind::ZkNodeFloor => "zookeeper",
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
        Kind::RedisFencedFloor(RedisFence::Script),
        Kind::RedisFencedFloor(RedisFence::Transaction),
        Kind::RedisFencedFloor(RedisFence::Clocked),
        Kind::RsLock,
        Kind::RedisScriptFloor,
        Kind::RedisHandoffFloor,
        Kind::PgRow(1),
        Kind::PgAdvisory,
        Kind::PgFloor,
        Kind::PgFencedFloor,
        Kind::PgStatementFloor,
        Kind::PgNotifyFloor,
        Kind::MySqlGetLock,
        Kind::MySqlRow(1),
        Kind::MySqlStatementFloor,
        Kind::MySqlKillFloor,
        Kind::MySqlFencedFloor,
        Kind::ZkFloor,
        Kind::ZkRecipeFloor,
        Kind::ZkNodeFloor,
    ]);
    kinds
}
