//! Waiters are granted in arrival order, a releaser cannot barge ahead of them, and a waiter
//! that vanished while first in line delays the next grant by at most the waiter ttl.

mod support;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, LockName};
use lock_redis::{RedisLock, redis};
use lock_testkit::{scaled, scaled_ms};
use tokio::time::Instant;

fn name(case: &str) -> LockName {
    LockName::new(format!("fairness/{case}/{:x}", rand::random::<u64>())).expect("valid name")
}

async fn client(url: &str) -> Arc<dyn DistributedLock> {
    Arc::new(
        lock_redis::RedisLock::builder(url)
            .connect()
            .await
            .expect("connect"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_are_granted_in_arrival_order() {
    const WAITERS: usize = 8;
    let Some(url) = support::redis_url() else {
        return;
    };
    let name = name("order");
    let holder = client(&url).await;
    assert!(holder.capabilities().fair_fifo);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for index in 0..WAITERS {
        let (lock, name, order) = (client(&url).await, name.clone(), Arc::clone(&order));
        tasks.push(tokio::spawn(async move {
            let guard = lock
                .acquire_timeout(&name, scaled_ms(20_000))
                .await
                .expect("acquire");
            order
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(index);
            tokio::time::sleep(Duration::from_millis(5)).await;
            guard.release().await.expect("release");
        }));
        // Arrive one after another.
        tokio::time::sleep(scaled_ms(40)).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_releaser_reacquiring_at_once_goes_behind_the_waiter() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let name = name("barging");
    let (holder, waiter) = (client(&url).await, client(&url).await);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move { waiter.acquire_timeout(&name, scaled_ms(10_000)).await })
    };
    tokio::time::sleep(scaled_ms(200)).await;
    held.release().await.expect("release");
    // The releaser asks again at once; the queued waiter must come first.
    let again = holder.try_acquire(&name).await.expect("try again");
    assert!(
        again.is_none(),
        "the releaser barged ahead of a queued waiter"
    );
    let granted = waiting.await.expect("waiter task").expect("waiter acquire");
    granted.release().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_first_waiter_delays_the_next_grant_by_at_most_its_ttl() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let ttl = scaled_ms(700);
    let lock = RedisLock::builder(&url)
        .waiter_ttl(ttl)
        .connect()
        .await
        .expect("connect");
    let name = name("vanished");
    let keys = support::raw_keys(&lock, &name);
    // A waiter that queued and then died: an entry nobody refreshes.
    let mut raw = support::raw(&url).await;
    let (seconds, micros): (u64, u64) = redis::cmd("TIME")
        .query_async(&mut raw)
        .await
        .expect("TIME");
    let now_ms = seconds * 1000 + micros / 1000;
    let _: i64 = redis::cmd("ZADD")
        .arg(&keys.0)
        .arg(seconds * 1_000_000 + micros)
        .arg("dead-waiter")
        .query_async(&mut raw)
        .await
        .expect("ZADD queue");
    let _: i64 = redis::cmd("ZADD")
        .arg(&keys.1)
        .arg(now_ms + ttl.as_millis() as u64)
        .arg("dead-waiter")
        .query_async(&mut raw)
        .await
        .expect("ZADD expiry");
    assert!(
        lock.try_acquire(&name).await.expect("try").is_none(),
        "a single try jumped the queue"
    );
    let started = Instant::now();
    let guard = lock
        .acquire_timeout(&name, scaled_ms(10_000))
        .await
        .expect("acquire");
    let waited = started.elapsed();
    assert!(
        waited <= ttl + scaled(Duration::from_millis(400)),
        "waited {waited:?} behind a dead waiter with a {ttl:?} ttl"
    );
    guard.release().await.expect("release");
}
