//! `with_lock`: value, release on error and panic, loss mid-closure, re-entry.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use lock_core::{DistributedLock, DistributedLockExt, ErrorKind, LockName};

use super::support::{client, options, supports, unique_name};
use crate::{ConformanceTarget, scaled_ms};

async fn assert_free(lock: &Arc<dyn DistributedLock>, name: &LockName, after: &str) {
    let guard = lock.acquire_timeout(name, scaled_ms(2000)).await;
    let guard = guard.unwrap_or_else(|error| panic!("lock not free after {after}: {error}"));
    guard.release().await.expect("release");
}

/// `with_lock` returns the closure's value and releases.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn with_lock_returns_value(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("with_lock_value");
    let token = a
        .with_lock_guarded(&name, |handle| async move { handle.fencing_token() })
        .await
        .expect("with_lock");
    let value = a
        .with_lock(&name, || async { 42 })
        .await
        .expect("with_lock");
    assert_eq!(value, 42);
    let _ = token;
    assert_free(&b, &name, "with_lock returned").await;
}

/// A closure returning an error still releases the lock.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn with_lock_releases_on_error(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("with_lock_error");
    let outcome = a
        .with_lock(&name, || async { Err::<(), &str>("closure failed") })
        .await
        .expect("with_lock");
    assert_eq!(outcome, Err("closure failed"));
    assert_free(&b, &name, "the closure returned an error").await;
}

/// A panicking closure still releases the lock; the panic reaches the caller.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn with_lock_releases_on_panic(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("with_lock_panic");
    let task_name = name.clone();
    let joined = tokio::spawn(async move {
        a.with_lock(&task_name, || async {
            panic!("deliberate panic inside with_lock")
        })
        .await
    })
    .await;
    assert!(
        joined.as_ref().is_err_and(tokio::task::JoinError::is_panic),
        "panic did not propagate"
    );
    assert_free(&b, &name, "the closure panicked").await;
}

/// Severing the hold mid-closure drops the closure and returns `Lost`.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn with_lock_lost_mid_closure_drops_it(target: Arc<dyn ConformanceTarget>) {
    let a = client(&target).await;
    let case = "with_lock_lost";
    if !supports(&a, case, |c| c.lost_detection, "lost detection") {
        return;
    }
    let name = unique_name(case);
    let dropped = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let task = {
        let (name, dropped) = (name.clone(), Arc::clone(&dropped));
        tokio::spawn(async move {
            let opts = options(scaled_ms(5000), scaled_ms(900));
            a.with_lock_guarded_with(&name, &opts, |_| async move {
                let _flag = SetOnDrop(dropped);
                let _ = started_tx.send(());
                tokio::time::sleep(scaled_ms(60_000)).await;
                "finished"
            })
            .await
        })
    };
    started_rx.await.expect("closure started");
    target.sever(&name).await.expect("sever");
    let outcome = tokio::time::timeout(scaled_ms(10_000), task)
        .await
        .expect("with_lock ignored the loss")
        .expect("task");
    let error = outcome.expect_err("with_lock returned a value after the hold was lost");
    assert_eq!(error.kind(), ErrorKind::Lost, "{error}");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the closure's future was not dropped"
    );
}

/// Nested `with_lock` on the same name in the same task re-enters instead of deadlocking.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn with_lock_nested_reenters(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let name = unique_name("with_lock_nested");
    let inner_lock = Arc::clone(&a);
    let inner_name = name.clone();
    let nested = a.with_lock_guarded(&name, |outer| async move {
        inner_lock
            .with_lock_guarded(&inner_name, |inner| async move {
                (outer.fencing_token(), inner.fencing_token())
            })
            .await
    });
    let (outer, inner) = tokio::time::timeout(scaled_ms(10_000), nested)
        .await
        .expect("nested with_lock deadlocked")
        .expect("outer with_lock")
        .expect("inner with_lock");
    assert_eq!(
        outer, inner,
        "the inner call took a second hold instead of re-entering"
    );
    assert_free(&b, &name, "nested with_lock returned").await;
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
