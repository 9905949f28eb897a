//! Acquire, try, release, names and timeouts.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind, LockName};
use tokio::time::Instant;

use super::support::{client, unique_name};
use crate::{ConformanceTarget, scaled, scaled_ms};

/// Acquire, release, and acquire again, from one client and then another.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn acquire_release_reacquire(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("acquire_release_reacquire");
    let first = a
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("first acquire");
    assert_eq!(first.name(), &name);
    assert!(!first.is_lost(), "fresh guard reports lost");
    first.release().await.expect("first release");
    let again = a
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("re-acquire by the same client");
    again.release().await.expect("second release");
    let other = b
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire by another client");
    other.release().await.expect("third release");
}

/// `try_acquire` on a lock held by another client answers `None` at once.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn try_acquire_on_held_returns_none(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("try_acquire_on_held");
    let held = a
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let started = Instant::now();
    let attempt = b.try_acquire(&name).await.expect("try_acquire errored");
    assert!(attempt.is_none(), "try_acquire granted a held lock");
    assert!(
        started.elapsed() < scaled_ms(2000),
        "try_acquire waited {:?}",
        started.elapsed()
    );
    held.release().await.expect("release");
    let free = b
        .try_acquire(&name)
        .await
        .expect("try_acquire after release");
    free.expect("try_acquire on a free lock returned None")
        .release()
        .await
        .expect("release");
}

/// Holding one name does not block another.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn distinct_names_are_independent(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let first = unique_name("distinct_a");
    let second = unique_name("distinct_b");
    let held = a
        .acquire_timeout(&first, scaled_ms(5000))
        .await
        .expect("acquire first");
    let other = b
        .try_acquire(&second)
        .await
        .expect("try second")
        .expect("second name blocked by the first");
    other.release().await.expect("release second");
    held.release().await.expect("release first");
}

/// Unicode, slashes, spaces, escapes and 200-byte names work, and names differing only in
/// characters a backend might escape stay distinct locks.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn odd_names_work_and_stay_distinct(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let base = unique_name("odd").to_string();
    let long = format!("{base}/{}", "ü".repeat(100 - base.len().div_ceil(2)));
    let names: Vec<String> = [
        format!("{base}/ロック 🔒"),
        format!("{base}/a/b"),
        format!("{base}/a%2Fb"),
        format!("{base}/a_b"),
        format!("{base}/a b"),
        format!("{base}/A B"),
        format!("{base}/.."),
        format!("{base}/'; DROP TABLE locks; --"),
        format!("{base}/{{tag}}"),
        long,
    ]
    .into();
    let names: Vec<LockName> = names
        .iter()
        .map(|n| LockName::new(n).expect("valid name"))
        .collect();
    let mut guards = Vec::new();
    for name in &names {
        let guard = a
            .try_acquire(name)
            .await
            .unwrap_or_else(|e| panic!("{name:?}: {e}"));
        guards.push(
            guard.unwrap_or_else(|| {
                panic!("{name:?} is blocked by another odd name: names collide")
            }),
        );
        let blocked = b
            .try_acquire(name)
            .await
            .unwrap_or_else(|e| panic!("{name:?}: {e}"));
        assert!(blocked.is_none(), "{name:?} was granted to two clients");
    }
    for guard in guards {
        guard.release().await.expect("release odd name");
    }
}

/// Invalid names fail with `InvalidInput` before any I/O.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn invalid_names_are_rejected_before_io(target: Arc<dyn ConformanceTarget>) {
    let a = client(&target).await;
    for bad in [
        String::new(),
        "x".repeat(LockName::MAX_LEN + 1),
        "tab\there".to_owned(),
    ] {
        let error = a
            .try_acquire(bad.as_str())
            .await
            .expect_err("invalid name accepted");
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    }
}

/// `acquire_timeout` on a held lock fails with `Timeout` within the timeout plus slack.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn acquire_timeout_returns_timeout_in_time(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("acquire_timeout");
    let held = a
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let wait = Duration::from_millis(500);
    let started = Instant::now();
    let error = b
        .acquire_timeout(&name, wait)
        .await
        .expect_err("granted a held lock");
    let elapsed = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    assert!(
        elapsed >= wait,
        "gave up after {elapsed:?}, before the {wait:?} timeout"
    );
    assert!(
        elapsed <= wait + scaled_ms(1000),
        "timed out after {elapsed:?}; asked for {wait:?}"
    );
    held.release().await.expect("release");
}

/// A waiting client gets the lock soon after the holder releases it.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn waiter_acquires_soon_after_release(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("waiter_after_release");
    let held = a
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let waiter_name = name.clone();
    let waiter = tokio::spawn(async move {
        let guard = b.acquire_timeout(&waiter_name, scaled_ms(20_000)).await;
        (Instant::now(), guard)
    });
    tokio::time::sleep(scaled_ms(300)).await;
    assert!(!waiter.is_finished(), "waiter acquired a held lock");
    let released_at = Instant::now();
    held.release().await.expect("release");
    let (acquired_at, guard) = waiter.await.expect("waiter task");
    guard
        .expect("waiter acquire")
        .release()
        .await
        .expect("waiter release");
    let handoff = acquired_at - released_at;
    assert!(
        handoff <= scaled(Duration::from_millis(1500)),
        "waiter took {handoff:?} after release"
    );
}
