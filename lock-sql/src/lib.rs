#![doc = include_str!("../README.md")]
// Built without any dialect feature the crate still compiles, refusing every URL; the
// per-dialect plumbing is then unused.
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(unused_variables, dead_code, unreachable_code, unused_imports)
)]

mod config;
mod db;
mod dialect;
mod error;
mod held;
#[cfg(feature = "postgres")]
mod listener;
mod lock;
mod table;
mod wakeups;

use std::sync::Arc;

use lock_core::{DistributedLock, Result};

pub use config::SqlLockBuilder;
pub use dialect::Dialect;
pub use lock::SqlLock;
pub use table::TableName;

/// The sqlx version this crate uses, re-exported so users need not pin a second copy.
pub use sqlx;

/// Connects to the SQL database `url` names and returns it as a lock service.
///
/// Accepts `postgres://`, `postgresql://`, `mysql://`, `mariadb://` (spoken as MySQL),
/// `sqlite://PATH` (the file is created if missing) and `sqlite::memory:` (private to this
/// service), with optional `lock_table`, `lock_pool_size`, `lock_connect_timeout_ms` and
/// `lock_operation_timeout_ms` query parameters. The lock table is created if it is missing.
///
/// # Cancel safety
///
/// Cancel safe: dropping the future closes any connection being opened.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a malformed URL, an
/// unknown scheme, or a dialect whose feature is off (before any I/O);
/// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when the database cannot be
/// reached within the connect timeout; [`ErrorKind::Backend`](lock_core::ErrorKind::Backend)
/// when it refuses to create the lock table.
pub async fn connect(url: &str) -> Result<Arc<dyn DistributedLock>> {
    Ok(Arc::new(SqlLock::connect(url).await?))
}
