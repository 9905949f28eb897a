#![doc = include_str!("../README.md")]

mod connect;

pub use connect::{SCHEMES, Scheme, connect};

// The contract: what every backend implements and every user calls.
pub use lock_core::{
    AcquireOptions, AcquireOptionsBuilder, Backoff, CancellationToken, Capabilities, Claim,
    DistributedLock, DistributedLockExt, ElectionExt, Error, ErrorKind, HolderInfo, IntoLockName,
    Leader, LeaderChange, LeaderObserver, Leadership, LockGuard, LockHandle, LockName, LockStatus,
    MAX_OWNER_LABEL, MemoryLock, Missed, Result, RwLockExt, SemaphoreExt, ServiceBuilder,
    async_trait,
};

/// Metric names, span names and their fields (metrics with the `metrics` feature).
pub use lock_core::telemetry;

/// The URL grammar every scheme shares, and the redactor that hides passwords.
pub use lock_core::url;

/// For backend authors: the acquisition engine and what a backend plugs into it.
pub use lock_core::backend;

/// The ZooKeeper backend ([`lock_zk`]), with its client crate as `zookeeper::zookeeper_client`.
#[cfg(feature = "zookeeper")]
pub use lock_zk as zookeeper;

/// The Redis backend ([`lock_redis`]), with its client crate as `redis::redis`.
#[cfg(feature = "redis")]
pub use lock_redis as redis;

/// The SQL backend ([`lock_sql`]), with its client crate as `sql::sqlx`.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub use lock_sql as sql;
