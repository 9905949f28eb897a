//! Arrival order on every dialect: waiters on separate services (as separate processes would
//! be) are granted in the order they queued, and a newcomer never takes a freed lock ahead of
//! an acquisition already waiting for it.

use std::time::Duration;

use lock_core::{AcquireOptions, Backoff, DistributedLock, DistributedLockExt};
use lock_testkit::scaled_ms;

use super::line::{Line, service};
use super::{SqlTarget, unique};

pub(crate) async fn waiters_are_granted_in_arrival_order(target: &SqlTarget) {
    const WAITERS: usize = 6;
    let name = unique("fifo/order");
    let holder = service(target).await;
    assert!(holder.capabilities().fair_fifo, "{:?}", target.dialect);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let hold = Duration::from_millis(5);
    let mut line = Line::queue_up(target, &holder, &name, WAITERS, hold).await;
    held.release().await.expect("release");
    assert_eq!(
        line.granted().await,
        (0..WAITERS).collect::<Vec<_>>(),
        "grants out of arrival order"
    );
}

pub(crate) async fn a_newcomer_never_barges_ahead_of_a_waiter(target: &SqlTarget) {
    let name = unique("fifo/barging");
    let holder = service(target).await;
    let newcomer = service(target).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let mut line = Line::queue_up(target, &holder, &name, 1, Duration::ZERO).await;
    let released_at = tokio::time::Instant::now();
    held.release().await.expect("release");
    // The waiter may be granted, and release, before this try is sent (the test's thread can
    // be descheduled in between): only a lock taken before the waiter's turn is a barge.
    if let Some(taken) = newcomer.try_acquire(&name).await.expect("try") {
        assert_eq!(
            line.granted_so_far(),
            [0],
            "a newcomer took the lock ahead of the waiting acquisition"
        );
        taken.release().await.expect("release");
    }
    assert_eq!(line.granted().await, [0]);
    let handoff = released_at.elapsed();
    assert!(
        handoff < scaled_ms(1_000),
        "the waiter was granted {handoff:?} after the release"
    );
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
    let mut line = Line::queue_up(target, &holder, &name, WAITERS, Duration::ZERO).await;
    let queued = line.statements();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let reads = line.statements() - queued;
    held.release().await.expect("release");
    assert_eq!(
        line.granted().await,
        (0..WAITERS).collect::<Vec<_>>(),
        "grants out of order"
    );
    assert!(
        reads <= READS_AT_MOST,
        "{WAITERS} waiters sent {reads} tries while the line stood still for 1.5 s"
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
