//! Many holds at once: what the scale tests (client memory, renewal traffic, per-hold costs)
//! start from.

use futures_util::StreamExt;
use lock_core::{AcquireOptions, DistributedLock, DistributedLockExt, LockGuard, LockName};

/// Acquisitions in flight at once while the holds are taken.
const TAKING_AT_ONCE: usize = 16;

/// Holds `holds` fresh names, `{prefix}/0` to `{prefix}/{holds - 1}`, on `lock` with
/// `options`, 16 acquisitions at a time; the guards come in no set order.
///
/// # Panics
///
/// When a name is invalid, or an acquisition fails or times out (the names must be free).
pub async fn hold_many(
    lock: &dyn DistributedLock,
    prefix: &str,
    holds: usize,
    options: &AcquireOptions,
) -> Vec<LockGuard> {
    futures_util::stream::iter(0..holds)
        .map(|hold| async move {
            let name = LockName::new(format!("{prefix}/{hold}")).expect("valid name");
            lock.acquire_with_options(&name, options)
                .await
                .expect("acquire")
                .expect("a fresh name is free")
        })
        .buffer_unordered(TAKING_AT_ONCE)
        .collect()
        .await
}
