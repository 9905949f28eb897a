#![doc = include_str!("../README.md")]

pub mod backend;
mod backoff;
mod capabilities;
mod claim;
mod claim_ext;
mod election;
mod error;
mod ext;
mod guard;
mod handle;
mod lock;
mod memory;
mod name;
mod options;
mod owner_label;
mod rw_lock;
mod semaphore;
mod status;
pub mod telemetry;
pub mod url;
mod with_lock;

pub use backend::ServiceBuilder;
pub use backoff::Backoff;
pub use capabilities::Capabilities;
pub use claim::Claim;
pub use election::{
    DEFAULT_OBSERVER_POLL, ElectionExt, Leader, LeaderChange, LeaderObserver, LeaderTicks,
    Leadership, Missed,
};
pub use error::{Error, ErrorKind, Result};
pub use ext::DistributedLockExt;
pub use guard::LockGuard;
pub use handle::LockHandle;
pub use lock::DistributedLock;
pub use memory::MemoryLock;
pub use name::{IntoLockName, LockName};
pub use options::{AcquireOptions, AcquireOptionsBuilder};
pub use owner_label::MAX_OWNER_LABEL;
pub use rw_lock::RwLockExt;
pub use semaphore::SemaphoreExt;
pub use status::{HolderInfo, LockStatus};

/// Re-exported so backends and users name the same `async_trait` and `CancellationToken`.
pub use async_trait::async_trait;
pub use tokio_util::sync::CancellationToken;
