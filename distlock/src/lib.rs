#![doc = include_str!("../README.md")]

mod connect;
mod memory_registry;

pub use connect::{SCHEMES, connect};
pub use lock_core::*;

/// The ZooKeeper backend ([`lock_zk`]), with its client crate as `zookeeper::zookeeper_client`.
#[cfg(feature = "zookeeper")]
pub use lock_zk as zookeeper;

/// The Redis backend ([`lock_redis`]), with its client crate as `redis::redis`.
#[cfg(feature = "redis")]
pub use lock_redis as redis;

/// The SQL backend ([`lock_sql`]), with its client crate as `sql::sqlx`.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub use lock_sql as sql;
