//! The chaos suite: fault scenarios against every backend they apply to, each trial judged by
//! the history checker and a fenced resource, summed up per scenario and backend.
//!
//! Every trial runs two holder processes (`lock-holder work`, see [`crate::work`]): holder A
//! takes the lock and writes to a [`FenceServer`](crate::fence::FenceServer) every 20 ms; the
//! fault strikes; holder B then asks for the same lock, holds it 300 ms while writing, and
//! releases. Both report grant, lost signal and release with `CLOCK_MONOTONIC` stamps; the
//! fenced resource stamps and judges every write itself. Leases (and ZooKeeper sessions) are
//! 800 ms, except the ensemble's 3 s sessions.

mod clock;
mod failover;
mod failover_cluster;
mod failover_sentinel;
mod lab;
mod lockrun;
mod report;
mod scenarios;
mod trial;
mod worker;

pub use clock::LIBFAKETIME;
pub use report::{CellSummary, markdown_table};
pub use trial::TrialOutcome;

use lab::Lab;

/// A lock service configuration under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// SQLite file shared by the holder processes.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MariaDB.
    Mysql,
    /// One Redis master.
    Redis,
    /// One Redis master with a replica; grants wait for the replica's acknowledgement.
    RedisWait,
    /// Redlock over three independent masters.
    Redlock,
    /// A Redis Cluster of three shards, a master and a replica each.
    RedisCluster,
    /// As [`RedisCluster`](Self::RedisCluster); grants wait for a replica's acknowledgement.
    RedisClusterWait,
    /// A Redis master with two replicas behind three Sentinels.
    RedisSentinel,
    /// As [`RedisSentinel`](Self::RedisSentinel); grants wait for a replica's acknowledgement.
    RedisSentinelWait,
    /// ZooKeeper (standalone, except in the leader-kill scenario: a three-node ensemble).
    Zookeeper,
}

impl Backend {
    /// The name used in tables.
    pub fn id(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
            Self::Mysql => "mysql",
            Self::Redis => "redis",
            Self::RedisWait => "redis+wait",
            Self::Redlock => "redlock",
            Self::RedisCluster => "redis-cluster",
            Self::RedisClusterWait => "redis-cluster+wait",
            Self::RedisSentinel => "redis-sentinel",
            Self::RedisSentinelWait => "redis-sentinel+wait",
            Self::Zookeeper => "zookeeper",
        }
    }
}

/// A fault scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// Holder A is paused (SIGSTOP) past its lease while B takes the lock, then resumed; it
    /// writes before it looks at its lost signal.
    PausedHolder,
    /// Holder A is killed (SIGKILL).
    KilledHolder,
    /// A's link to the server goes silent (fault proxy blackhole) until B has held the lock.
    LinkBlackholed,
    /// The server is paused for two leases, then resumed; B asks after the resume.
    ServerPaused,
    /// The server is killed and started again on the same port and data; A releases two leases
    /// later if it still holds.
    ServerRestarted,
    /// Replication to the replicas is cut, A takes the lock on the master, the master dies and
    /// a replica is promoted (`REPLICAOF NO ONE`; in a cluster, the slot's replica takes over;
    /// behind Sentinels, they fail over); B asks the promoted replica. Every trial starts a
    /// deployment of its own.
    RedisFailover,
    /// The ensemble's leader is killed while A holds; A then releases.
    LeaderKilled,
    /// One of three Redlock masters is paused while A holds; A releases; resumed after B.
    RedlockMinorityPaused,
    /// A's link drops everything A sends but still carries what the server sends (watch
    /// notifications, pub/sub), until B has held the lock.
    OneWayPartition,
    /// A's open connections stall (bytes held, sockets open, as a pulled cable or a frozen
    /// host would leave them); connections A opens afterwards work.
    LinkStalled,
    /// The server's wall clock steps forward by five leases while A holds.
    ServerClockStep,
    /// The replica stops acknowledging; A (holding) releases; B's grant must be acknowledged.
    ReplicaLagging,
    /// A is `lockrun`, running a command that writes from a background grandchild; lockrun is
    /// killed with SIGKILL.
    LockrunKilled,
    /// A is `lockrun` as above; lockrun is frozen (SIGSTOP) past its lease, so its hold is lost
    /// under it, and resumed after B.
    LockrunFrozen,
    /// As [`PausedHolder`](Self::PausedHolder), with A holding the only permit of a one-permit
    /// semaphore, which B then asks for.
    PausedPermitHolder,
    /// As [`KilledHolder`](Self::KilledHolder), with A holding the only permit of a one-permit
    /// semaphore.
    KilledPermitHolder,
    /// As [`PausedHolder`](Self::PausedHolder), with A holding a read lock and B asking for the
    /// write lock.
    PausedReader,
    /// As [`KilledHolder`](Self::KilledHolder), with A a reader and B a writer.
    KilledReader,
    /// As [`PausedHolder`](Self::PausedHolder), with A leading the name's election and B a
    /// candidate; writes carry the epoch.
    PausedLeader,
    /// As [`KilledHolder`](Self::KilledHolder), with A leading and B a candidate.
    KilledLeader,
}

impl Scenario {
    /// The name used in tables.
    pub fn id(self) -> &'static str {
        match self {
            Self::PausedHolder => "holder paused past lease",
            Self::KilledHolder => "holder killed",
            Self::LinkBlackholed => "client link blackholed",
            Self::ServerPaused => "server paused",
            Self::ServerRestarted => "server restarted",
            Self::RedisFailover => "redis failover, link cut",
            Self::LeaderKilled => "zookeeper leader killed",
            Self::RedlockMinorityPaused => "redlock minority paused",
            Self::OneWayPartition => "one-way partition (A heard, not heard)",
            Self::LinkStalled => "client link stalled",
            Self::ServerClockStep => "server clock steps 4 s forward",
            Self::ReplicaLagging => "replica lagging under WAIT",
            Self::LockrunKilled => "lockrun killed (SIGKILL)",
            Self::LockrunFrozen => "lockrun frozen, grandchild writing",
            Self::PausedPermitHolder => "permit holder paused past lease",
            Self::KilledPermitHolder => "permit holder killed",
            Self::PausedReader => "reader paused past lease, writer next",
            Self::KilledReader => "reader killed, writer next",
            Self::PausedLeader => "leader paused past lease",
            Self::KilledLeader => "leader killed",
        }
    }

    /// The fault this scenario strikes with: the holder scenarios of the semaphore and the
    /// read-write lock strike as the mutex's do.
    pub fn fault(self) -> Scenario {
        match self {
            Self::PausedPermitHolder | Self::PausedReader | Self::PausedLeader => {
                Self::PausedHolder
            }
            Self::KilledPermitHolder | Self::KilledReader | Self::KilledLeader => {
                Self::KilledHolder
            }
            other => other,
        }
    }

    /// What holders A and B claim (`lock-holder work`'s CLAIM argument); `None`: the mutex.
    pub fn claims(self) -> (Option<&'static str>, Option<&'static str>) {
        match self {
            Self::PausedPermitHolder | Self::KilledPermitHolder => {
                (Some("permits:1"), Some("permits:1"))
            }
            Self::PausedReader | Self::KilledReader => (Some("read"), Some("write")),
            Self::PausedLeader | Self::KilledLeader => (Some("elect"), Some("elect")),
            _ => (None, None),
        }
    }

    /// Whether holder A is a `lockrun` process rather than `lock-holder work`.
    pub fn is_lockrun(self) -> bool {
        matches!(self, Self::LockrunKilled | Self::LockrunFrozen)
    }

    /// The backends this scenario applies to. The in-process memory lock applies to none: a
    /// pause or a kill of its process stops every holder at once.
    pub fn backends(self) -> &'static [Backend] {
        use Backend::*;
        match self {
            Self::PausedHolder | Self::KilledHolder => &[
                Sqlite, Postgres, Mysql, Redis, RedisWait, Redlock, Zookeeper,
            ],
            Self::LinkBlackholed => &[Postgres, Mysql, Redis, RedisWait, Redlock, Zookeeper],
            Self::ServerPaused | Self::ServerRestarted => &[Postgres, Mysql, Redis, Zookeeper],
            Self::RedisFailover => &[
                Redis,
                RedisWait,
                RedisCluster,
                RedisClusterWait,
                RedisSentinel,
                RedisSentinelWait,
            ],
            Self::LeaderKilled => &[Zookeeper],
            Self::RedlockMinorityPaused => &[Redlock],
            Self::OneWayPartition => &[Redis, Zookeeper],
            Self::LinkStalled => &[Postgres, Mysql, Redis, RedisWait, Redlock, Zookeeper],
            // Redis is left out: Debian's redis-server hangs at start under libfaketime.
            Self::ServerClockStep => &[Postgres, Mysql, Zookeeper],
            Self::ReplicaLagging => &[RedisWait],
            Self::LockrunKilled | Self::LockrunFrozen => &[Sqlite, Postgres, Redis, Zookeeper],
            // A Redlock offers no semaphores, read-write locks or elections.
            Self::PausedPermitHolder
            | Self::KilledPermitHolder
            | Self::PausedReader
            | Self::KilledReader
            | Self::PausedLeader
            | Self::KilledLeader => &[Sqlite, Postgres, Mysql, Redis, RedisWait, Zookeeper],
        }
    }

    /// Every scenario, in table order.
    pub const ALL: [Scenario; 20] = [
        Self::PausedHolder,
        Self::KilledHolder,
        Self::LinkBlackholed,
        Self::ServerPaused,
        Self::ServerRestarted,
        Self::RedisFailover,
        Self::LeaderKilled,
        Self::RedlockMinorityPaused,
        Self::OneWayPartition,
        Self::LinkStalled,
        Self::ServerClockStep,
        Self::ReplicaLagging,
        Self::LockrunKilled,
        Self::LockrunFrozen,
        Self::PausedPermitHolder,
        Self::KilledPermitHolder,
        Self::PausedReader,
        Self::KilledReader,
        Self::PausedLeader,
        Self::KilledLeader,
    ];
}

/// Runs chaos trials, keeping servers up between them.
#[derive(Debug)]
pub struct Runner {
    lab: Lab,
}

impl Runner {
    /// A runner whose trials start the `lock-holder` program at `holder` (and, for the
    /// lockrun scenarios, `lockrun`), with no servers started yet (each starts on first need).
    pub fn new(holder: std::path::PathBuf, lockrun: Option<std::path::PathBuf>) -> Self {
        Self {
            lab: Lab::new(holder, lockrun),
        }
    }

    /// Runs `trials` trials of one cell and sums them up. A trial that could not run (a server
    /// failed to start, a holder could not be spawned) counts in `errors` with its message.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: a dropped run may leave a server paused until the runner is dropped.
    ///
    /// # Errors
    ///
    /// The server's or client's error, as the runner reports it.
    pub async fn run_cell(
        &mut self,
        scenario: Scenario,
        backend: Backend,
        trials: usize,
    ) -> CellSummary {
        let mut outcomes = Vec::with_capacity(trials);
        let mut errors = Vec::new();
        for _ in 0..trials {
            let trial = if scenario.is_lockrun() {
                lockrun::run(&mut self.lab, scenario, backend).await
            } else {
                trial::run(&mut self.lab, scenario, backend).await
            };
            match trial {
                Ok(outcome) => outcomes.push(outcome),
                Err(error) => errors.push(error),
            }
        }
        if scenario == Scenario::ServerClockStep {
            self.lab.stop_faked();
        }
        CellSummary::new(scenario, backend, outcomes, errors)
    }
}
