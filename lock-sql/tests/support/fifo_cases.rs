//! Arrival order on every dialect: waiters on separate services (as separate processes would
//! be) are granted in the order they queued, and a newcomer never takes a freed lock ahead of
//! an acquisition already waiting for it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lock_core::{AcquireOptions, Backoff, DistributedLock, DistributedLockExt, LockName};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use tokio::task::JoinHandle;

use super::{SqlTarget, unique};

/// A service of its own, its schema step done, so its first try is a plain acquire statement.
async fn service(target: &SqlTarget) -> Arc<SqlLock> {
    let lock = target.lock().await;
    let warm = unique("fifo/warm-up");
    let guard = lock.try_acquire(&warm).await.expect("try").expect("free");
    guard.release().await.expect("release");
    Arc::new(lock)
}

/// Waits until `name` has `count` waiters in line, by `inspect`.
async fn wait_for_line(lock: &SqlLock, name: &LockName, count: u64) {
    let deadline = tokio::time::Instant::now() + scaled_ms(10_000);
    while lock.inspect(name).await.expect("inspect").waiters < count {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waiter {count} never queued"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One waiter on its own service: pushes `index` to `order` when granted, holds for `hold`,
/// releases.
async fn waiter(
    target: &SqlTarget,
    name: &LockName,
    index: usize,
    hold: Duration,
    order: &Arc<Mutex<Vec<usize>>>,
) -> JoinHandle<()> {
    let lock = service(target).await;
    let (name, order) = (name.clone(), Arc::clone(order));
    tokio::spawn(async move {
        let guard = lock
            .acquire_timeout(&name, scaled_ms(30_000))
            .await
            .expect("granted in time");
        order
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(index);
        tokio::time::sleep(hold).await;
        guard.release().await.expect("release");
    })
}

pub(crate) async fn waiters_are_granted_in_arrival_order(target: &SqlTarget) {
    const WAITERS: usize = 6;
    let name = unique("fifo/order");
    let holder = service(target).await;
    assert!(holder.capabilities().fair_fifo, "{:?}", target.dialect);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for index in 0..WAITERS {
        tasks.push(waiter(target, &name, index, Duration::from_millis(5), &order).await);
        wait_for_line(&holder, &name, index as u64 + 1).await;
    }
    held.release().await.expect("release");
    for task in tasks {
        task.await.expect("waiter");
    }
    let order = order.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(
        order,
        (0..WAITERS).collect::<Vec<_>>(),
        "grants out of arrival order"
    );
}

pub(crate) async fn a_newcomer_never_barges_ahead_of_a_waiter(target: &SqlTarget) {
    let name = unique("fifo/barging");
    let holder = service(target).await;
    let newcomer = service(target).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let order = Arc::new(Mutex::new(Vec::new()));
    let waiting = waiter(target, &name, 0, Duration::ZERO, &order).await;
    wait_for_line(&holder, &name, 1).await;
    let released_at = tokio::time::Instant::now();
    held.release().await.expect("release");
    let barged = newcomer.try_acquire(&name).await.expect("try");
    assert!(
        barged.is_none(),
        "a newcomer took the lock ahead of the waiting acquisition"
    );
    waiting.await.expect("waiter");
    let handoff = released_at.elapsed();
    assert!(
        handoff < scaled_ms(1_000),
        "the waiter was granted {handoff:?} after the release"
    );
    assert_eq!(*order.lock().unwrap_or_else(PoisonError::into_inner), [0]);
}

/// Four waiters behind a hold of 1.5 s: a line that stands still is read less and less often,
/// so the whole wait costs a few dozen tries, where reading at the pace of a moving line (one
/// read per millisecond for the first in line alone) would cost over a thousand.
pub(crate) async fn a_line_that_stands_still_costs_few_reads(target: &SqlTarget) {
    const WAITERS: usize = 4;
    const READS_AT_MOST: u64 = 200;
    let name = unique("fifo/standing");
    let holder = service(target).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut services = Vec::new();
    let mut tasks = Vec::new();
    for index in 0..WAITERS {
        let lock = service(target).await;
        let (wanted, order) = (name.clone(), Arc::clone(&order));
        services.push(Arc::clone(&lock));
        tasks.push(tokio::spawn(async move {
            let guard = lock.acquire_timeout(&wanted, scaled_ms(30_000)).await;
            let guard = guard.expect("granted in time");
            order
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(index);
            guard.release().await.expect("release");
        }));
        wait_for_line(&holder, &name, index as u64 + 1).await;
    }
    let sent = || -> u64 { services.iter().map(|lock| lock.acquire_statements()).sum() };
    let queued = sent();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let reads = sent() - queued;
    held.release().await.expect("release");
    for task in tasks {
        task.await.expect("waiter");
    }
    assert!(
        reads <= READS_AT_MOST,
        "{WAITERS} waiters sent {reads} tries while the line stood still for 1.5 s"
    );
    let order = order.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(
        order,
        (0..WAITERS).collect::<Vec<_>>(),
        "grants out of order"
    );
}

/// Two services taking turns on one lock: each acquisition is refused behind the other's
/// waiter, places its entry, and is granted at the next handoff. The backoff (at least
/// 500 ms a wait) never delays a handoff, the line's pace does: 20 grants take well under a
/// second, where a backoff wait after each refusal makes it 5 s or more.
pub(crate) async fn services_taking_turns_never_sit_out_a_backoff(target: &SqlTarget) {
    const ROUNDS: usize = 10;
    let name = unique("fifo/turns");
    let backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(1));
    let options = AcquireOptions::builder()
        .backoff(backoff.expect("backoff"))
        .wait(scaled_ms(30_000))
        .build()
        .expect("options");
    let services = [service(target).await, service(target).await];
    let started = tokio::time::Instant::now();
    let mut tasks = Vec::new();
    for lock in services {
        let (name, options) = (name.clone(), options.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..ROUNDS {
                let guard = lock.acquire_with_options(&name, &options).await;
                let guard = guard.expect("acquire").expect("granted in time");
                guard.release().await.expect("release");
            }
        }));
    }
    for task in tasks {
        task.await.expect("client");
    }
    let took = started.elapsed();
    assert!(
        took < scaled_ms(3_000),
        "{} grants taking turns took {took:?}",
        2 * ROUNDS
    );
}
