//! A line that moves by itself: waiters that each release as soon as they are granted, so
//! that once the holder lets go every handoff follows from the last, with no test in between.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, LockGuard, LockName};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use tokio::time::Instant;

/// Queues `count` waiters for `name`, taking turns over the `waiting` services, each waiting up
/// to 30 s; once all are in line (as `holding` counts them), releases `held` and waits for
/// every waiter to have held and released the lock: how long that took from the release.
pub(crate) async fn take_turns(
    holding: &SqlLock,
    held: LockGuard,
    waiting: &[Arc<SqlLock>],
    count: usize,
) -> Duration {
    let name = held.name().clone();
    let tasks: Vec<_> = (0..count)
        .map(|i| {
            let (waiting, name) = (Arc::clone(&waiting[i % waiting.len()]), name.clone());
            tokio::spawn(async move {
                let guard = waiting.acquire_timeout(name, scaled_ms(30_000)).await;
                guard
                    .expect("granted in time")
                    .release()
                    .await
                    .expect("release");
            })
        })
        .collect();
    in_line(holding, &name, count).await;
    let started = Instant::now();
    held.release().await.expect("release");
    for task in tasks {
        task.await.expect("waiter");
    }
    started.elapsed()
}

/// Waits until `count` acquisitions wait for `name`.
async fn in_line(holding: &SqlLock, name: &LockName, count: usize) {
    let deadline = Instant::now() + scaled_ms(10_000);
    while holding.inspect(name).await.expect("inspect").waiters < count as u64 {
        assert!(Instant::now() < deadline, "the waiters did not all queue");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
