//! Read-write locks: readers share, a writer excludes everyone, waiting writers go first.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;

use crate::claim_ext::{acquire_claim, acquire_claim_or_timeout, with_claim};
use crate::{Claim, DistributedLock, IntoLockName, LockGuard, LockHandle, Result};

/// Read-write conveniences for every [`DistributedLock`] whose backend offers
/// [`Capabilities::rw_lock`](crate::Capabilities::rw_lock), written once over
/// [`DistributedLock::acquire_claim_with`].
///
/// Readers share the name; a writer holds it alone. A writer that waits blocks readers that
/// arrive after it, so a steady stream of readers cannot starve writers. Every grant takes the
/// lock's next fencing token, so a write hold's token is larger than every token before it.
/// There is no downgrade (write to read without a gap): release the write hold, then read.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> lock_core::Result<()> {
/// use lock_core::{MemoryLock, RwLockExt};
///
/// let locks = MemoryLock::new();
/// let first = locks.read("cache/prices").await?;
/// let second = locks.read("cache/prices").await?;
/// assert!(locks.try_write("cache/prices").await?.is_none(), "readers hold it");
/// first.release().await?;
/// second.release().await?;
/// let writer = locks.write("cache/prices").await?;
/// assert!(writer.fencing_token() > 2);
/// # drop(writer);
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait RwLockExt: DistributedLock {
    /// Acquires a read hold on `name` with the service's default options.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_claim_with`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for an invalid name (before
    /// any I/O); `Timeout` if the service's default wait passes; otherwise as
    /// [`DistributedLock::acquire_claim_with`].
    async fn read<N: IntoLockName + Send>(&self, name: N) -> Result<LockGuard> {
        acquire_claim_or_timeout(self, name, Claim::Read, &self.default_options()).await
    }

    /// Acquires the write hold on `name` with the service's default options.
    ///
    /// # Cancel safety
    ///
    /// As [`read`](RwLockExt::read): a dropped writer stops blocking new readers.
    ///
    /// # Errors
    ///
    /// As [`read`](RwLockExt::read).
    async fn write<N: IntoLockName + Send>(&self, name: N) -> Result<LockGuard> {
        acquire_claim_or_timeout(self, name, Claim::Write, &self.default_options()).await
    }

    /// A read hold if one can be had right now; `Ok(None)` while a writer holds or waits.
    ///
    /// # Cancel safety
    ///
    /// As [`read`](RwLockExt::read).
    ///
    /// # Errors
    ///
    /// As [`read`](RwLockExt::read), without `Timeout`.
    async fn try_read<N: IntoLockName + Send>(&self, name: N) -> Result<Option<LockGuard>> {
        let options = self.default_options().with_wait(Some(Duration::ZERO));
        acquire_claim(self, name, Claim::Read, &options).await
    }

    /// The write hold if `name` is free right now; `Ok(None)` otherwise.
    ///
    /// # Cancel safety
    ///
    /// As [`read`](RwLockExt::read).
    ///
    /// # Errors
    ///
    /// As [`read`](RwLockExt::read), without `Timeout`.
    async fn try_write<N: IntoLockName + Send>(&self, name: N) -> Result<Option<LockGuard>> {
        let options = self.default_options().with_wait(Some(Duration::ZERO));
        acquire_claim(self, name, Claim::Write, &options).await
    }

    /// Acquires `claim` ([`Claim::Read`] or [`Claim::Write`]) on `name`, waiting at most `wait`.
    ///
    /// # Cancel safety
    ///
    /// As [`read`](RwLockExt::read).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) when `wait` passes without a grant;
    /// otherwise as [`read`](RwLockExt::read).
    async fn acquire_rw_timeout<N: IntoLockName + Send>(
        &self,
        name: N,
        claim: Claim,
        wait: Duration,
    ) -> Result<LockGuard> {
        let options = self.default_options().with_wait(Some(wait));
        acquire_claim_or_timeout(self, name, claim, &options).await
    }

    /// Runs `body` under a read hold, then releases it, as
    /// [`with_lock_guarded`](crate::DistributedLockExt::with_lock_guarded) does under the
    /// mutex. Nested in a `with_read` or `with_write` of the same service and name in the same
    /// task, it uses the enclosing hold.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops `body` and releases in the background.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Lost`](crate::ErrorKind::Lost) when the hold is lost while `body` runs;
    /// otherwise as [`read`](RwLockExt::read).
    async fn with_read<N, F, Fut, T>(&self, name: N, body: F) -> Result<T>
    where
        N: IntoLockName + Send,
        F: FnOnce(LockHandle) -> Fut + Send,
        Fut: Future<Output = T> + Send,
        T: Send,
    {
        with_claim(self, name, Claim::Read, body).await
    }

    /// Runs `body` under the write hold, then releases it. Nested in a `with_write` of the
    /// same service and name in the same task, it uses the enclosing hold; nested in a
    /// `with_read` it fails with `InvalidInput` (it would wait for itself).
    ///
    /// # Cancel safety
    ///
    /// As [`with_read`](RwLockExt::with_read).
    ///
    /// # Errors
    ///
    /// As [`with_read`](RwLockExt::with_read), and `InvalidInput` inside a read hold.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> lock_core::Result<()> {
    /// use lock_core::{MemoryLock, RwLockExt};
    ///
    /// let locks = MemoryLock::new();
    /// let rebuilt = locks
    ///     .with_write("cache/prices", |hold| async move {
    ///         // Rebuild the cache, stamping it with hold.fencing_token().
    ///         hold.fencing_token()
    ///     })
    ///     .await?;
    /// let seen = locks.with_read("cache/prices", |hold| async move { hold.fencing_token() }).await?;
    /// assert!(seen > rebuilt);
    /// # Ok(())
    /// # }
    /// ```
    async fn with_write<N, F, Fut, T>(&self, name: N, body: F) -> Result<T>
    where
        N: IntoLockName + Send,
        F: FnOnce(LockHandle) -> Fut + Send,
        Fut: Future<Output = T> + Send,
        T: Send,
    {
        with_claim(self, name, Claim::Write, body).await
    }
}

impl<L: DistributedLock + ?Sized> RwLockExt for L {}
