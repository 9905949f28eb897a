//! The lease scheduler: one task per service watches every hold, renewing each on its own
//! timeline, and survives the runtime it started on.

use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, LockGuard, MemoryLock};
use tokio::runtime::Handle;

fn lease(millis: u64, auto_renew: bool) -> AcquireOptions {
    AcquireOptions::builder()
        .lease(Duration::from_millis(millis))
        .auto_renew(auto_renew)
        .build()
        .expect("options")
}

/// Holds `count` names `PREFIX/INDEX`.
async fn hold_many(
    lock: &MemoryLock,
    prefix: &str,
    count: usize,
    options: &AcquireOptions,
) -> Vec<LockGuard> {
    let mut guards = Vec::with_capacity(count);
    for index in 0..count {
        let name = format!("{prefix}/{index}");
        let guard = lock.acquire_timeout_with(name.as_str(), options).await;
        guards.push(guard.expect("a free name is granted"));
    }
    guards
}

#[tokio::test]
async fn a_thousand_holds_cost_no_task_each() {
    let lock = MemoryLock::new();
    let before = Handle::current().metrics().num_alive_tasks();
    let guards = hold_many(&lock, "many", 1000, &AcquireOptions::default()).await;
    let during = Handle::current().metrics().num_alive_tasks();
    assert!(
        during <= before + 2,
        "1000 holds run {during} tasks (before: {before})"
    );
    for guard in guards {
        guard.release().await.expect("release");
    }
}

#[tokio::test(start_paused = true)]
async fn every_hold_is_renewed_on_its_own_timeline() {
    let lock = MemoryLock::new();
    let renewed = hold_many(&lock, "renewed", 200, &lease(300, true)).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let unrenewed = hold_many(&lock, "unrenewed", 3, &lease(300, false)).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let lost = renewed.iter().filter(|guard| guard.is_lost()).count();
    assert_eq!(lost, 0, "renewed holds lost over 16 leases");
    assert!(
        unrenewed.iter().all(LockGuard::is_lost),
        "holds without renewal outlived their lease"
    );
    let left = lock.lease_left(renewed[0].name()).unwrap_or_default();
    assert!(left > Duration::from_millis(100), "lease left: {left:?}");
}

#[test]
fn the_scheduler_starts_again_on_a_new_runtime() {
    let lock = MemoryLock::new();
    let first = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    first.block_on(async {
        let guard = lock.acquire("scheduler/first").await.expect("acquire");
        guard.release().await.expect("release");
    });
    drop(first);
    let second = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    second.block_on(async {
        let options = lease(200, false);
        let guard = lock
            .acquire_timeout_with("scheduler/second", &options)
            .await;
        let guard = guard.expect("acquire");
        let signalled = tokio::time::timeout(Duration::from_secs(3), guard.lost().cancelled());
        assert!(
            signalled.await.is_ok(),
            "no lost signal: the scheduler died with the first runtime"
        );
    });
}
