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
