//! How a [`BrokenLock`](super::BrokenLock) breaks semaphores and read-write locks.

use std::time::Duration;

use lock_core::{AcquireOptions, Claim, DistributedLock, LockGuard, LockName, MemoryLock, Result};
use tokio::time::Instant;

use super::Breakage;

/// Acquires `claim` on the memory lock underneath, broken as `breakage` says.
pub(super) async fn acquire(
    inner: &MemoryLock,
    breakage: Breakage,
    name: &LockName,
    claim: Claim,
    options: &AcquireOptions,
) -> Result<Option<LockGuard>> {
    match (breakage, claim) {
        (Breakage::SemaphoreAdmitsOneMore, Claim::Permit { max_permits }) => {
            let one_more = Claim::permit(max_permits.saturating_add(1));
            inner.acquire_claim_with(name, one_more, options).await
        }
        (Breakage::WriterSharesWithReaders, Claim::Write) => {
            inner.acquire_claim_with(name, Claim::Read, options).await
        }
        (Breakage::StarvesWriters, Claim::Write) => poll_for_write(inner, name, options).await,
        _ => inner.acquire_claim_with(name, claim, options).await,
    }
}

/// A writer that only ever tries, never queues: readers arriving while it waits go first.
async fn poll_for_write(
    inner: &MemoryLock,
    name: &LockName,
    options: &AcquireOptions,
) -> Result<Option<LockGuard>> {
    let deadline = options
        .wait
        .and_then(|wait| Instant::now().checked_add(wait));
    let once = options.clone().with_wait(Some(Duration::ZERO));
    loop {
        if let Some(guard) = inner.acquire_claim_with(name, Claim::Write, &once).await? {
            return Ok(Some(guard));
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
