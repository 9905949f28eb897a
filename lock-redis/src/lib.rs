#![doc = include_str!("../README.md")]

mod cleanup;
mod config;
mod error;
mod held;
mod keys;
mod node;
mod redlock;
mod redlock_held;
mod single;
mod subscriber;
mod token;

use std::sync::Arc;

pub use config::RedisLockBuilder;
pub use redis;
pub use redlock::Redlock;
pub use single::RedisLock;

/// Connects to Redis: `redis://[USER:PASSWORD@]HOST:PORT[/DB]`, `rediss://...` for TLS, or
/// several URLs separated by commas for Redlock over independent masters. Uses the defaults of
/// [`RedisLockBuilder`]; use it for other options.
///
/// # Cancel safety
///
/// Cancel safe: dropping the future closes the connections being opened.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a malformed URL (before
/// any I/O); [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when the server (or a
/// majority of Redlock masters) cannot be reached within the connect timeout.
pub async fn connect(url: &str) -> lock_core::Result<Arc<dyn lock_core::DistributedLock>> {
    RedisLockBuilder::new(url).connect().await
}
