//! What an operator sees: `inspect` and `list`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, LockName, LockStatus};

use super::support::{client, unique_name};
use crate::{ConformanceTarget, scaled_ms};

/// Polls `probe` every 20 ms until `done` holds for its answer, or panics with `what` and
/// the last answer after `limit`.
pub(super) async fn until_status<F, Fut>(
    limit: Duration,
    what: &str,
    probe: F,
    done: impl Fn(&LockStatus) -> bool,
) -> LockStatus
where
    F: Fn() -> Fut,
    Fut: Future<Output = lock_core::Result<LockStatus>>,
{
    let start = tokio::time::Instant::now();
    loop {
        let status = probe()
            .await
            .unwrap_or_else(|error| panic!("inspect: {error}"));
        if done(&status) {
            return status;
        }
        assert!(
            start.elapsed() < limit,
            "{what} not seen within {limit:?}; last status {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `inspect` during a hold shows the holder's label, token and a lease that counts down;
/// with 3 waiters it counts 3; once they give up and the holder releases it shows nothing.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn inspect_shows_holder_waiters_and_nothing_after_release(
    target: Arc<dyn ConformanceTarget>,
) {
    let (holder, observer) = (client(&target).await, client(&target).await);
    let name = unique_name("inspect");
    let label = format!("conformance-holder-{:08x}", rand::random::<u32>());
    let options = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .lease(scaled_ms(8000))
        .auto_renew(false)
        .owner_label(label.as_str())
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    let guard = holder.acquire_with(&name, &options).await.expect("acquire");
    let guard = guard.expect("acquire timed out");
    let first = observer.inspect(&name).await.expect("inspect");
    assert_eq!(first.holders.len(), 1, "{first:?}");
    let shown = &first.holders[0];
    assert_eq!(shown.owner_label, label, "{first:?}");
    assert_eq!(shown.fencing_token, guard.fencing_token(), "{first:?}");
    assert_eq!(first.waiters, 0, "{first:?}");
    if let Some(left) = shown.lease_left {
        assert!(left <= scaled_ms(8000) && !left.is_zero(), "{first:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let later = observer.inspect(&name).await.expect("inspect");
        let later_left = later.holders.first().and_then(|holder| holder.lease_left);
        assert!(
            later_left.is_some_and(|later| later + Duration::from_millis(200) <= left),
            "the lease did not count down: {left:?} then {later:?}"
        );
    }
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let (target, name) = (Arc::clone(&target), name.clone());
            tokio::spawn(async move {
                let waiter = client(&target).await;
                let _ = waiter.acquire_timeout(&name, scaled_ms(60_000)).await;
            })
        })
        .collect();
    let inspect = || observer.inspect(&name);
    until_status(scaled_ms(10_000), "3 waiters", inspect, |s| s.waiters == 3).await;
    for waiter in &waiters {
        waiter.abort();
    }
    until_status(scaled_ms(10_000), "no waiters", inspect, |s| s.waiters == 0).await;
    guard.release().await.expect("release");
    until_status(
        scaled_ms(10_000),
        "an idle lock",
        inspect,
        LockStatus::is_idle,
    )
    .await;
}

/// `list` shows exactly the held names under a prefix, sorted.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named locks held until
/// their leases (or session) end; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn list_shows_held_names_under_a_prefix(target: Arc<dyn ConformanceTarget>) {
    let locks = client(&target).await;
    let prefix = format!("conformance/list-{:016x}/", rand::random::<u64>());
    let named = |tail: &str| {
        LockName::new(format!("{prefix}{tail}")).unwrap_or_else(|error| panic!("{error}"))
    };
    let (a, b, gone) = (named("a"), named("b/c"), named("gone"));
    let released = locks.acquire(&gone).await.expect("acquire");
    released.release().await.expect("release");
    let held_b = locks.acquire(&b).await.expect("acquire");
    let held_a = locks.acquire(&a).await.expect("acquire");
    let listed = locks.list(&prefix).await.expect("list");
    assert_eq!(listed, vec![a.clone(), b.clone()], "under {prefix}");
    let everything = locks.list("").await.expect("list everything");
    assert!(
        everything.contains(&a) && everything.contains(&b) && !everything.contains(&gone),
        "an empty prefix lists every held name: {everything:?}"
    );
    held_a.release().await.expect("release");
    held_b.release().await.expect("release");
    assert!(locks.list(&prefix).await.expect("list").is_empty());
}
