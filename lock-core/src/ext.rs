//! Conveniences over [`DistributedLock`], written once for every backend.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;

use crate::with_lock::run_with_lock;
use crate::{
    AcquireOptions, Claim, DistributedLock, Error, ErrorKind, IntoLockName, LockGuard, LockHandle,
    Result,
};

/// Acquisition conveniences for every [`DistributedLock`], including `dyn DistributedLock`.
#[async_trait]
pub trait DistributedLockExt: DistributedLock {
    /// Acquires `name` with the service's [default options](DistributedLock::default_options):
    /// unless the service sets a default wait, waiting as long as it takes.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_with`]: dropping the future leaves nothing held.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an invalid name (before any I/O), and the backend's
    /// errors (see [`DistributedLock::acquire_with`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> lock_core::Result<()> {
    /// use lock_core::{DistributedLockExt, MemoryLock};
    ///
    /// let locks = MemoryLock::new();
    /// let guard = locks.acquire("jobs/nightly").await?;
    /// assert!(guard.fencing_token() > 0);
    /// guard.release().await?;
    /// # Ok(())
    /// # }
    /// ```
    async fn acquire<N: IntoLockName + Send>(&self, name: N) -> Result<LockGuard> {
        self.acquire_timeout_with(name, &self.default_options())
            .await
    }

    /// Acquires `name` if it is free right now; `Ok(None)` if it is held elsewhere.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_with`].
    ///
    /// # Errors
    ///
    /// As [`acquire`](DistributedLockExt::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> lock_core::Result<()> {
    /// use lock_core::{DistributedLockExt, MemoryLock};
    ///
    /// let locks = MemoryLock::new();
    /// let held = locks.try_acquire("jobs/nightly").await?.expect("free");
    /// assert!(locks.try_acquire("jobs/nightly").await?.is_none(), "held elsewhere");
    /// held.release().await?;
    /// # Ok(())
    /// # }
    /// ```
    async fn try_acquire<N: IntoLockName + Send>(&self, name: N) -> Result<Option<LockGuard>> {
        let options = self.default_options().with_wait(Some(Duration::ZERO));
        self.acquire_with_options(name, &options).await
    }

    /// Acquires `name`, waiting at most `wait`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_with`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Timeout`] when `wait` passes with the lock held elsewhere; otherwise as
    /// [`acquire`](DistributedLockExt::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> lock_core::Result<()> {
    /// use lock_core::{DistributedLockExt, MemoryLock};
    ///
    /// let locks = MemoryLock::new();
    /// use std::time::Duration;
    /// use lock_core::ErrorKind;
    ///
    /// let held = locks.acquire("jobs/nightly").await?;
    /// let error = locks.acquire_timeout("jobs/nightly", Duration::from_millis(50)).await.unwrap_err();
    /// assert_eq!(error.kind(), ErrorKind::Timeout);
    /// held.release().await?;
    /// # Ok(())
    /// # }
    /// ```
    async fn acquire_timeout<N: IntoLockName + Send>(
        &self,
        name: N,
        wait: Duration,
    ) -> Result<LockGuard> {
        let options = self.default_options().with_wait(Some(wait));
        self.acquire_timeout_with(name, &options).await
    }

    /// Acquires `name` with `options`; `Ok(None)` when `options.wait` passes with the lock held
    /// elsewhere.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_with`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an invalid name or options (before any I/O); otherwise as
    /// [`DistributedLock::acquire_with`].
    async fn acquire_with_options<N: IntoLockName + Send>(
        &self,
        name: N,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let name = name.into_lock_name()?;
        options.validate()?;
        self.acquire_with(&name, options).await
    }

    /// Acquires `name` with `options`, turning a wait that ends without the lock into
    /// [`ErrorKind::Timeout`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_with`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Timeout`], and as [`acquire_with_options`](DistributedLockExt::acquire_with_options).
    async fn acquire_timeout_with<N: IntoLockName + Send>(
        &self,
        name: N,
        options: &AcquireOptions,
    ) -> Result<LockGuard> {
        let name = name.into_lock_name()?;
        match self.acquire_with_options(&name, options).await? {
            Some(guard) => Ok(guard),
            None => Err(timeout_error(self.backend(), &name, options)),
        }
    }

    /// Acquires `claim` on `name` (a semaphore permit, a read or write hold) with `options`,
    /// turning a wait that ends without a grant into [`ErrorKind::Timeout`]: the options-taking
    /// form of [`SemaphoreExt`](crate::SemaphoreExt) and [`RwLockExt`](crate::RwLockExt).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`DistributedLock::acquire_claim_with`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Timeout`]; [`ErrorKind::InvalidInput`] for an invalid name, claim or
    /// options (before any I/O); otherwise as [`DistributedLock::acquire_claim_with`].
    async fn acquire_claim_timeout_with<N: IntoLockName + Send>(
        &self,
        name: N,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<LockGuard> {
        crate::claim_ext::acquire_claim_or_timeout(self, name, claim, options).await
    }

    /// Runs `body` while holding `name`, then releases, and returns `body`'s value.
    ///
    /// The lock is always released: after `body` completes, returns an error value, or panics
    /// (the panic resumes after the release). If the hold is lost while `body` runs, `body`'s
    /// future is dropped and [`ErrorKind::Lost`] returned. Nested `with_lock` calls on the same
    /// lock service and name in the same task re-enter instead of deadlocking (a spawned task is
    /// another task and waits like any other holder).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops `body` and releases the lock in the background.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Lost`] as above; otherwise as [`acquire`](DistributedLockExt::acquire). A
    /// failure to release after `body` completed is logged, not returned: the lease ends the
    /// hold.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> lock_core::Result<()> {
    /// use lock_core::{DistributedLockExt, MemoryLock};
    ///
    /// let locks = MemoryLock::new();
    /// let total = locks.with_lock("reports/nightly", || async { 40 + 2 }).await?;
    /// assert_eq!(total, 42);
    /// // Nested on the same name in the same task: re-enters instead of deadlocking.
    /// let nested = locks
    ///     .with_lock("reports/nightly", || async { locks.with_lock("reports/nightly", || async { 1 }).await })
    ///     .await??;
    /// assert_eq!(nested, 1);
    /// # Ok(())
    /// # }
    /// ```
    async fn with_lock<N, F, Fut, T>(&self, name: N, body: F) -> Result<T>
    where
        N: IntoLockName + Send,
        F: FnOnce() -> Fut + Send,
        Fut: Future<Output = T> + Send,
        T: Send,
    {
        self.with_lock_guarded_with(name, &self.default_options(), |_| body())
            .await
    }

    /// As [`with_lock`](DistributedLockExt::with_lock), handing `body` a [`LockHandle`] with the
    /// fencing token and lost signal.
    ///
    /// # Cancel safety
    ///
    /// As [`with_lock`](DistributedLockExt::with_lock).
    ///
    /// # Errors
    ///
    /// As [`with_lock`](DistributedLockExt::with_lock).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> lock_core::Result<()> {
    /// use lock_core::{DistributedLockExt, MemoryLock};
    ///
    /// let locks = MemoryLock::new();
    /// let token = locks.with_lock_guarded("accounts/7", |hold| async move {
    ///     // Hand the token to the store, which rejects writes with smaller ones.
    ///     hold.fencing_token()
    /// }).await?;
    /// assert!(token > 0);
    /// # Ok(())
    /// # }
    /// ```
    async fn with_lock_guarded<N, F, Fut, T>(&self, name: N, body: F) -> Result<T>
    where
        N: IntoLockName + Send,
        F: FnOnce(LockHandle) -> Fut + Send,
        Fut: Future<Output = T> + Send,
        T: Send,
    {
        self.with_lock_guarded_with(name, &self.default_options(), body)
            .await
    }

    /// As [`with_lock_guarded`](DistributedLockExt::with_lock_guarded), with `options`; a wait
    /// that ends without the lock is [`ErrorKind::Timeout`].
    ///
    /// # Cancel safety
    ///
    /// As [`with_lock`](DistributedLockExt::with_lock).
    ///
    /// # Errors
    ///
    /// As [`with_lock`](DistributedLockExt::with_lock), plus [`ErrorKind::Timeout`].
    async fn with_lock_guarded_with<N, F, Fut, T>(
        &self,
        name: N,
        options: &AcquireOptions,
        body: F,
    ) -> Result<T>
    where
        N: IntoLockName + Send,
        F: FnOnce(LockHandle) -> Fut + Send,
        Fut: Future<Output = T> + Send,
        T: Send,
    {
        let name = name.into_lock_name()?;
        options.validate()?;
        run_with_lock(self, name, None, options, body).await
    }
}

impl<L: DistributedLock + ?Sized> DistributedLockExt for L {}

/// The error for a wait that ended with `name` still held elsewhere.
pub(crate) fn timeout_error(
    backend: &'static str,
    name: &crate::LockName,
    options: &AcquireOptions,
) -> Error {
    let waited = options.wait.unwrap_or_default();
    Error::new(
        ErrorKind::Timeout,
        format!("still held elsewhere after waiting {waited:?}"),
    )
    .with_backend(backend)
    .with_operation("acquire")
    .with_lock(name)
}
