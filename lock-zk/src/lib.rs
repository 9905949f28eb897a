#![doc = include_str!("../README.md")]

mod acl;
mod config;
mod errors;
mod expiry;
mod held;
mod lock;
mod names;
mod nodes;
mod pending;
mod session;
mod url;
mod wait;

use std::sync::Arc;

pub use acl::ZkAcl;
pub use config::{ZkConfig, ZkConfigBuilder};
pub use lock::ZkLock;
/// The ZooKeeper client this backend uses, re-exported so users name the same version.
pub use zookeeper_client;

/// Connects to the ZooKeeper ensemble a `zk://` URL names and returns it as a lock service.
///
/// `zk://[user:password@]host:port[,host:port...][/chroot][?session_timeout=10s&connect_timeout=5s&operation_timeout=10s&root=/distlock&acl=open]`
///
/// # Cancel safety
///
/// Cancel safe: dropping the future abandons the connection attempt.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a malformed URL or option
/// (before any I/O); [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when no
/// session is established within the connect timeout.
pub async fn connect(url: &str) -> lock_core::Result<Arc<dyn lock_core::DistributedLock>> {
    let config = ZkConfig::from_url(url)?;
    Ok(Arc::new(ZkLock::connect(config).await?))
}
