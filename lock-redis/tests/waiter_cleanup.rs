//! Dropped waiters leave nothing behind: no subscription on the shared connection, no entry in
//! the waiter queue.

mod support;

use std::time::Duration;

use lock_core::{DistributedLockExt, LockName};
use lock_redis::{RedisLock, redis};
use lock_testkit::scaled_ms;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dropped_waiters_unsubscribe_and_leave_the_queue() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let holder = RedisLock::builder(&url).connect().await.expect("connect");
    let name = LockName::new(format!("cleanup/{:x}", rand::random::<u64>())).expect("name");
    let (_, _, channel) = lock.keys_for(&name);
    let (queue, expiry) = support::raw_keys(&lock, &name);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    for round in 0..60 {
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let (lock, name) = (lock.clone(), name.clone());
                tokio::spawn(async move { lock.acquire_timeout(&name, scaled_ms(30_000)).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_micros(
            rand::random_range(0..4000) + round * 50,
        ))
        .await;
        for waiter in waiters {
            waiter.abort();
            assert!(
                waiter.await.is_err_and(|e| e.is_cancelled()),
                "a waiter finished"
            );
        }
    }
    let mut raw = support::raw(&url).await;
    let started = Instant::now();
    loop {
        // Each waiter listens on a channel of its own under the lock's: `CHANNEL:TOKEN`.
        let listened: Vec<String> = redis::cmd("PUBSUB")
            .arg("CHANNELS")
            .arg(format!("{channel}*"))
            .query_async(&mut raw)
            .await
            .expect("PUBSUB CHANNELS");
        let subscribers = listened.len();
        let queued: i64 = redis::cmd("ZCARD")
            .arg(&queue)
            .query_async(&mut raw)
            .await
            .expect("ZCARD");
        let expiring: i64 = redis::cmd("ZCARD")
            .arg(&expiry)
            .query_async(&mut raw)
            .await
            .expect("ZCARD");
        if subscribers == 0 && queued == 0 && expiring == 0 {
            break;
        }
        assert!(
            started.elapsed() < scaled_ms(2000),
            "left behind: {subscribers} subscriptions, {queued} queue entries, {expiring} expiries"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    held.release().await.expect("release");
}
