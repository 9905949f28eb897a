#![doc = include_str!("../README.md")]

mod backoff;
mod capabilities;
mod error;
mod ext;
mod guard;
mod handle;
mod held;
mod lease;
mod lock;
mod memory;
mod name;
mod options;
mod with_lock;

pub use backoff::Backoff;
pub use capabilities::Capabilities;
pub use error::{Error, ErrorKind, Result};
pub use ext::DistributedLockExt;
pub use guard::{LockGuard, LockGuardBuilder};
pub use handle::LockHandle;
pub use held::HeldLock;
pub use lock::DistributedLock;
pub use memory::MemoryLock;
pub use name::{IntoLockName, LockName};
pub use options::{AcquireOptions, AcquireOptionsBuilder};

/// Re-exported so backends and users name the same `async_trait` and `CancellationToken`.
pub use async_trait::async_trait;
pub use tokio_util::sync::CancellationToken;
