//! The lease scheduler: one task per service watches every hold, renews each before its lease
//! ends (the holds of a service together, in one batch), and survives the runtime it started
//! on.

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
async fn renewed_holds_live_on_and_unrenewed_ones_end() {
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

#[tokio::test(start_paused = true)]
async fn holds_granted_at_scattered_times_come_to_renew_together() {
    let lock = MemoryLock::new();
    let options = lease(3000, true);
    let mut guards = Vec::new();
    // Granted over the first 300 ms of a one-second renewal period.
    for batch in 0..10 {
        guards.extend(hold_many(&lock, &format!("scattered/{batch}"), 10, &options).await);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let mut lease_ends: Vec<Duration> = guards
        .iter()
        .map(|guard| lock.lease_left(guard.name()).unwrap_or_default())
        .collect();
    lease_ends.sort();
    lease_ends.dedup();
    assert_eq!(
        lease_ends.len(),
        1,
        "100 holds renewed at {} different instants: {lease_ends:?}",
        lease_ends.len()
    );
    assert!(
        guards.iter().all(|guard| !guard.is_lost()),
        "a hold was lost"
    );
    for guard in guards {
        guard.release().await.expect("release");
    }
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
