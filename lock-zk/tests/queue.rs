//! The queue's handoff against a real ZooKeeper: a waiter whose only predecessor is deleted
//! holds without listing the queue again, so the deletion must be the holder's, never a
//! waiter's leaving the middle of the queue.

mod support;

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind};
use lock_testkit::scaled_ms;
use support::{eventually, unique};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_leaving_the_middle_of_the_queue_hands_nothing_on() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let name = unique("queue-middle");
    let holder = support::connect(&url).await;
    let guard = holder
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire a free lock");
    // The middle waiter queues first and gives up while the lock is still held.
    let middle = support::connect(&url).await;
    let leaving = {
        let name = name.clone();
        tokio::spawn(async move { middle.acquire_timeout(&name, scaled_ms(1000)).await })
    };
    tokio::time::sleep(scaled_ms(300)).await;
    let last = Arc::new(support::connect(&url).await);
    let waiting = {
        let (last, name) = (Arc::clone(&last), name.clone());
        tokio::spawn(async move { last.acquire_timeout(&name, scaled_ms(20_000)).await })
    };
    let gave_up = leaving.await.expect("middle task");
    let error = gave_up.expect_err("the middle waiter acquired a held lock");
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    // Its node's deletion woke the last waiter, which must go on waiting for the holder.
    eventually(scaled_ms(5000), "the last waiter woken", || {
        last.predecessor_wakeups() >= 1
    })
    .await;
    tokio::time::sleep(scaled_ms(300)).await;
    assert!(
        !waiting.is_finished(),
        "the last waiter acquired while the holder still held"
    );
    assert!(!guard.is_lost(), "the holder lost its hold");
    guard.release().await.expect("release");
    let next = waiting.await.expect("last task");
    next.expect("the last waiter acquires after the release")
        .release()
        .await
        .expect("release");
}

/// A service whose last hold saw its queue empty sends its next create without listing the
/// queue; a node another service made in between must still keep it from holding.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_made_since_our_last_hold_is_never_overlooked() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let name = unique("queue-lone-other");
    let (ours, theirs) = (support::connect(&url).await, support::connect(&url).await);
    for round in 0..10 {
        let guard = ours.acquire_timeout(&name, scaled_ms(5000)).await;
        guard.expect("acquire").release().await.expect("release");
        let held = theirs.acquire_timeout(&name, scaled_ms(5000)).await;
        let held = held.expect("the other service acquires a free lock");
        let taken = ours.try_acquire(&name).await.expect("try");
        assert!(
            taken.is_none(),
            "round {round}: acquired while another service held the lock"
        );
        held.release().await.expect("release");
    }
}

/// Two acquisitions of one service racing after a hold that saw its queue empty: one holds,
/// never both.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_acquisitions_after_a_lone_hold_never_both_hold() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let name = unique("queue-lone-race");
    let lock = Arc::new(support::connect(&url).await);
    for round in 0..20 {
        let guard = lock.acquire_timeout(&name, scaled_ms(5000)).await;
        guard.expect("acquire").release().await.expect("release");
        let tries = (0..2).map(|_| {
            let (lock, name) = (Arc::clone(&lock), name.clone());
            tokio::spawn(async move { lock.try_acquire(&name).await })
        });
        let mut guards = Vec::new();
        for task in tries.collect::<Vec<_>>() {
            guards.extend(task.await.expect("task").expect("try"));
        }
        assert!(guards.len() <= 1, "round {round}: both acquisitions hold");
        for guard in guards {
            guard.release().await.expect("release");
        }
    }
}
