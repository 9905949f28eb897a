//! The shared steps of the semaphore and read-write conveniences: validate before any I/O,
//! acquire, and turn a wait that ended without a grant into `Timeout`.

use std::future::Future;

use crate::ext::timeout_error;
use crate::with_lock::run_with_lock;
use crate::{AcquireOptions, Claim, DistributedLock, IntoLockName, LockGuard, LockHandle, Result};

/// Acquires `claim` on `name` with `options`; `Ok(None)` when the wait ends without a grant.
pub(crate) async fn acquire_claim<L, N>(
    lock: &L,
    name: N,
    claim: Claim,
    options: &AcquireOptions,
) -> Result<Option<LockGuard>>
where
    L: DistributedLock + ?Sized,
    N: IntoLockName,
{
    let name = name.into_lock_name()?;
    claim.validate()?;
    options.validate()?;
    lock.acquire_claim_with(&name, claim, options).await
}

/// As [`acquire_claim`], with a wait that ends without a grant as `Timeout`.
pub(crate) async fn acquire_claim_or_timeout<L, N>(
    lock: &L,
    name: N,
    claim: Claim,
    options: &AcquireOptions,
) -> Result<LockGuard>
where
    L: DistributedLock + ?Sized,
    N: IntoLockName,
{
    let name = name.into_lock_name()?;
    match acquire_claim(lock, &name, claim, options).await? {
        Some(guard) => Ok(guard),
        None => Err(timeout_error(lock.backend(), &name, options)),
    }
}

/// Runs `body` under `claim` on `name`, as `with_lock` runs it under the mutex.
pub(crate) async fn with_claim<L, N, F, Fut, T>(
    lock: &L,
    name: N,
    claim: Claim,
    body: F,
) -> Result<T>
where
    L: DistributedLock + ?Sized,
    N: IntoLockName,
    F: FnOnce(LockHandle) -> Fut,
    Fut: Future<Output = T>,
{
    let name = name.into_lock_name()?;
    claim.validate()?;
    let options = lock.default_options();
    options.validate()?;
    run_with_lock(lock, name, Some(claim), &options, body).await
}
