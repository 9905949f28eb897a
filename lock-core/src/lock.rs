//! The contract every backend implements.

use std::fmt;

use async_trait::async_trait;

use crate::{AcquireOptions, Capabilities, LockGuard, LockName, Result};

/// A distributed lock service: one backend connection that can lock any number of names.
///
/// Backends implement only [`acquire_with`](DistributedLock::acquire_with) (one call to the
/// engine, [`backend::acquire`](crate::backend::acquire)); the conveniences
/// (`acquire`, `try_acquire`, `acquire_timeout`, `with_lock`, ...) live once in
/// [`DistributedLockExt`](crate::DistributedLockExt). The trait is object safe, so a backend can
/// be chosen at run time as `Arc<dyn DistributedLock>`.
#[async_trait]
pub trait DistributedLock: Send + Sync + fmt::Debug {
    /// Acquires `name`, waiting up to `options.wait` while it is held elsewhere.
    ///
    /// Returns `Ok(Some(guard))` on a grant and `Ok(None)` when the wait ended with the lock
    /// still held elsewhere.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future at any await point leaves no lock held and no waiter
    /// entry behind, beyond an immediate background cleanup.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for invalid options (before
    /// any I/O), [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) when the server cannot
    /// be reached within the configured timeout, [`ErrorKind::Backend`](crate::ErrorKind::Backend)
    /// for other server errors.
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>>;

    /// The backend's short name: `"memory"`, `"redis"`, `"zookeeper"`, `"postgres"`, ...
    fn backend(&self) -> &'static str;

    /// What this backend guarantees.
    fn capabilities(&self) -> Capabilities;

    /// The options the conveniences of [`DistributedLockExt`](crate::DistributedLockExt)
    /// start from: the service's defaults (its URL's `lease`, `wait`, ... parameters), or
    /// [`AcquireOptions::default`].
    fn default_options(&self) -> AcquireOptions {
        AcquireOptions::default()
    }

    /// Identifies the lock service for same-task re-entry of `with_lock`: clones of one service
    /// (which share its connections and holds) must return the same value, distinct services
    /// different ones. The default, the object's address, suits services that are not cloned.
    fn service_identity(&self) -> usize {
        std::ptr::from_ref(self).cast::<()>() as usize
    }
}
