//! Counting semaphores: at most N holders of a name at once, each with a fencing token.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;

use crate::claim_ext::{acquire_claim, acquire_claim_or_timeout, with_claim};
use crate::{Claim, DistributedLock, IntoLockName, LockGuard, LockHandle, Result};

/// Semaphore conveniences for every [`DistributedLock`] whose backend offers
/// [`Capabilities::semaphore`](crate::Capabilities::semaphore), written once over
/// [`DistributedLock::acquire_claim_with`].
///
/// A permit's guard is a [`LockGuard`]: its fencing token comes from the semaphore's one
/// counter, so tokens strictly increase across every grant of the name, whichever permit it
/// is; its lease is renewed and its lost signal fires like a mutex hold's. Every holder of a name must pass
/// the same `max_permits`.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> lock_core::Result<()> {
/// use lock_core::{MemoryLock, SemaphoreExt};
///
/// let locks = MemoryLock::new();
/// let first = locks.acquire_permit("api/vendor", 2).await?;
/// let second = locks.acquire_permit("api/vendor", 2).await?;
/// assert!(second.fencing_token() > first.fencing_token());
/// assert!(locks.try_acquire_permit("api/vendor", 2).await?.is_none(), "both permits taken");
/// first.release().await?;
/// let third = locks.try_acquire_permit("api/vendor", 2).await?.expect("a permit is free");
/// # drop((second, third));
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait SemaphoreExt: DistributedLock {
    /// Acquires one of `max_permits` permits of `name` with the service's default options.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_claim_with`]: dropping the future leaves no
    /// permit taken.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for an invalid name or limit
    /// (before any I/O) or a limit other than the holders'; `Timeout` if the service's default
    /// wait passes; otherwise as [`DistributedLock::acquire_claim_with`].
    async fn acquire_permit<N: IntoLockName + Send>(
        &self,
        name: N,
        max_permits: u32,
    ) -> Result<LockGuard> {
        let options = self.default_options();
        acquire_claim_or_timeout(self, name, Claim::permit(max_permits), &options).await
    }

    /// Takes a permit if one is free right now; `Ok(None)` if all are taken.
    ///
    /// # Cancel safety
    ///
    /// As [`acquire_permit`](SemaphoreExt::acquire_permit).
    ///
    /// # Errors
    ///
    /// As [`acquire_permit`](SemaphoreExt::acquire_permit), without `Timeout`.
    async fn try_acquire_permit<N: IntoLockName + Send>(
        &self,
        name: N,
        max_permits: u32,
    ) -> Result<Option<LockGuard>> {
        let options = self.default_options().with_wait(Some(Duration::ZERO));
        acquire_claim(self, name, Claim::permit(max_permits), &options).await
    }

    /// Acquires a permit, waiting at most `wait`.
    ///
    /// # Cancel safety
    ///
    /// As [`acquire_permit`](SemaphoreExt::acquire_permit).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) when `wait` passes with every permit
    /// taken; otherwise as [`acquire_permit`](SemaphoreExt::acquire_permit).
    async fn acquire_permit_timeout<N: IntoLockName + Send>(
        &self,
        name: N,
        max_permits: u32,
        wait: Duration,
    ) -> Result<LockGuard> {
        let options = self.default_options().with_wait(Some(wait));
        acquire_claim_or_timeout(self, name, Claim::permit(max_permits), &options).await
    }

    /// Runs `body` while holding a permit, then releases it, as
    /// [`with_lock_guarded`](crate::DistributedLockExt::with_lock_guarded) does for the mutex:
    /// released after an error value or a panic; `body` dropped and
    /// [`ErrorKind::Lost`](crate::ErrorKind::Lost) returned if the permit is lost; a nested
    /// `with_permit` on the same service and name in the same task uses the enclosing permit.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops `body` and releases the permit in the background.
    ///
    /// # Errors
    ///
    /// `Lost` as above; otherwise as [`acquire_permit`](SemaphoreExt::acquire_permit).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> lock_core::Result<()> {
    /// use lock_core::{MemoryLock, SemaphoreExt};
    ///
    /// let locks = MemoryLock::new();
    /// // At most 5 callers of the vendor's API at once, across every process.
    /// let status = locks
    ///     .with_permit("api/vendor", 5, |permit| async move { permit.fencing_token() > 0 })
    ///     .await?;
    /// assert!(status);
    /// # Ok(())
    /// # }
    /// ```
    async fn with_permit<N, F, Fut, T>(&self, name: N, max_permits: u32, body: F) -> Result<T>
    where
        N: IntoLockName + Send,
        F: FnOnce(LockHandle) -> Fut + Send,
        Fut: Future<Output = T> + Send,
        T: Send,
    {
        with_claim(self, name, Claim::permit(max_permits), body).await
    }
}

impl<L: DistributedLock + ?Sized> SemaphoreExt for L {}
