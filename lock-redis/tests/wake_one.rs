//! A release wakes the first queued waiter alone: every waiting acquisition listens on a
//! channel of its own, so a release's message reaches one connection however many wait, and
//! the waiters behind the first neither wake nor try.

mod support;

use std::time::Duration;

use lock_core::{DistributedLockExt, LockName};
use lock_redis::{RedisLock, redis};
use lock_testkit::scaled_ms;
use tokio::time::Instant;

const WAITERS: usize = 8;

/// Every channel of the lock's key space with its subscriber count.
async fn channels(conn: &mut redis::aio::MultiplexedConnection, tag: &str) -> Vec<(String, u64)> {
    let pattern = format!("{tag}:released*");
    let names: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg(&pattern)
        .query_async(conn)
        .await
        .expect("PUBSUB CHANNELS");
    if names.is_empty() {
        return Vec::new();
    }
    redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(&names)
        .query_async(conn)
        .await
        .expect("PUBSUB NUMSUB")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_is_heard_by_the_first_waiter_alone() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let name = LockName::new(format!("wake-one/{:x}", rand::random::<u64>())).expect("name");
    let tag = format!("{{distlock:{name}}}");
    let client = redis::Client::open(url.as_str()).expect("client");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
    let holder = RedisLock::builder(&url).connect().await.expect("connect");
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let mut waiters = Vec::new();
    for _ in 0..WAITERS {
        let lock = RedisLock::builder(&url).connect().await.expect("connect");
        let name = name.clone();
        waiters.push(tokio::spawn(async move {
            let guard = lock
                .acquire_timeout(&name, scaled_ms(20_000))
                .await
                .expect("granted within the wait");
            guard.release().await.expect("release");
        }));
    }
    // Every waiter queued and listening.
    let deadline = Instant::now() + scaled_ms(10_000);
    let listening = loop {
        let found = channels(&mut conn, &tag).await;
        let total: u64 = found.iter().map(|(_, count)| count).sum();
        if total == WAITERS as u64 || Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let total: u64 = listening.iter().map(|(_, count)| count).sum();
    assert_eq!(total, WAITERS as u64, "waiters listening: {listening:?}");
    let busiest = listening.iter().map(|(_, count)| *count).max();
    assert_eq!(
        busiest,
        Some(1),
        "a release's channel reaches {busiest:?} connections among {WAITERS} waiters: {listening:?}"
    );
    // The grants still go round, in order, each woken by its predecessor's release.
    held.release().await.expect("release");
    for waiter in waiters {
        waiter.await.expect("waiter");
    }
}
