//! Helpers the cases share.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{AcquireOptions, Capabilities, DistributedLock, LockName};

use crate::{ConformanceTarget, scaled_ms};

/// A fresh client, or a panic that says why there is none.
pub(super) async fn client(target: &Arc<dyn ConformanceTarget>) -> Arc<dyn DistributedLock> {
    target
        .client()
        .await
        .unwrap_or_else(|error| panic!("cannot create a client: {error}"))
}

/// A lock name no other case or run uses.
pub(super) fn unique_name(case: &str) -> LockName {
    let name = format!("conformance/{case}/{:016x}", rand::random::<u64>());
    LockName::new(name).unwrap_or_else(|error| panic!("{error}"))
}

/// Whether the backend has what a case needs; prints a skip note when it does not.
pub(super) fn supports(
    client: &Arc<dyn DistributedLock>,
    case: &str,
    need: impl Fn(&Capabilities) -> bool,
    what: &str,
) -> bool {
    let ok = need(&client.capabilities());
    if !ok {
        eprintln!("SKIPPED {case}: backend {} lacks {what}", client.backend());
    }
    ok
}

/// A fresh client if the backend has what a case needs; `None`, with a skip note, if not.
pub(super) async fn client_if(
    target: &Arc<dyn ConformanceTarget>,
    case: &str,
    need: impl Fn(&Capabilities) -> bool,
    what: &str,
) -> Option<Arc<dyn DistributedLock>> {
    let lock = client(target).await;
    supports(&lock, case, need, what).then_some(lock)
}

/// Options with `wait` and `lease`, auto-renew on.
pub(super) fn options(wait: Duration, lease: Duration) -> AcquireOptions {
    AcquireOptions::builder()
        .wait(wait)
        .lease(lease)
        .build()
        .unwrap_or_else(|error| panic!("{error}"))
}

/// Options for a hold left to lapse: a 1 s lease (scaled) that is not renewed, a 5 s wait,
/// and a drift margin wide enough that a loaded machine's scheduling cannot eat it.
pub(super) fn unrenewed() -> AcquireOptions {
    AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .lease(scaled_ms(1000))
        .auto_renew(false)
        .clock_drift(0.1)
        .build()
        .unwrap_or_else(|error| panic!("{error}"))
}

/// Waits until `condition` holds, polling every 10 ms, or panics with `what` after `limit`.
pub(super) async fn eventually(limit: Duration, what: &str, condition: impl Fn() -> bool) {
    let start = tokio::time::Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
