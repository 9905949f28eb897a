//! A release grants the lock to the first queued waiter in the same step: the waiter holds it
//! without another try, with the next fencing token and a lease that runs out no later than
//! the key. A waiter that stopped refreshing its entry is passed over, and a waiter that
//! missed the message finds the lock its own at its next try.

mod support;

use std::time::Duration;

use lock_core::{DistributedLockExt, LockName};
use lock_redis::{RedisLock, redis};
use lock_testkit::scaled_ms;
use lock_testkit::servers::RedisServer;
use tokio::time::Instant;

fn name(case: &str) -> LockName {
    LockName::new(format!("handoff/{case}/{:x}", rand::random::<u64>())).expect("name")
}

async fn connect(url: &str, waiter_ttl: Duration) -> RedisLock {
    RedisLock::builder(url)
        .waiter_ttl(waiter_ttl)
        .connect()
        .await
        .expect("connect")
}

/// The owner label of the lock value `value` (`TOKEN GRANTED_MS LABEL`).
fn label(value: &str) -> &str {
    value.splitn(3, ' ').nth(2).unwrap_or_default()
}

/// Milliseconds since the epoch by the server's clock.
async fn server_ms(raw: &mut support::Raw) -> u64 {
    let (seconds, micros): (u64, u64) = redis::cmd("TIME").query_async(raw).await.expect("TIME");
    seconds * 1000 + micros / 1000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_release_grants_the_first_waiter_with_the_next_fence_and_a_safe_lease() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let name = name("granted");
    // A fallback timer far beyond the test: only the release can wake the waiter in time.
    let (holder, waiter) = (
        connect(&url, Duration::from_secs(60)).await,
        connect(&url, Duration::from_secs(60)).await,
    );
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let first = held.fencing_token();
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move { waiter.acquire_timeout(&name, scaled_ms(20_000)).await })
    };
    tokio::time::sleep(scaled_ms(300)).await;
    let (key, fence_key, _) = holder.keys_for(&name);
    let mut raw = support::raw(&url).await;
    let before: String = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("GET");
    held.release().await.expect("release");
    let guard = waiting.await.expect("task").expect("granted");
    assert!(guard.fencing_token() > first, "the fence did not rise");
    let (value, counter, pttl): (String, u64, i64) = redis::pipe()
        .get(&key)
        .get(&fence_key)
        .pttl(&key)
        .query_async(&mut raw)
        .await
        .expect("read the lock");
    assert_eq!(
        counter,
        guard.fencing_token(),
        "the counter names the grant"
    );
    assert_ne!(
        value.split(' ').next(),
        before.split(' ').next(),
        "the holder's token"
    );
    assert_eq!(
        label(&value),
        label(&before),
        "the waiter's label: {value:?}"
    );
    // The guard counts on no more than the key lives.
    let key_ends = Instant::now() + Duration::from_millis(pttl.max(0) as u64);
    assert!(
        guard.valid_until() <= key_ends,
        "the guard counts on {:?} past the key's end",
        guard.valid_until() - key_ends
    );
    guard.release().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_first_waiter_that_stopped_refreshing_is_passed_over() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let name = name("stale");
    let (holder, waiter) = (
        connect(&url, Duration::from_secs(60)).await,
        connect(&url, Duration::from_secs(60)).await,
    );
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let (key, _, _) = holder.keys_for(&name);
    let (queue, expiry) = support::raw_keys(&holder, &name);
    let mut raw = support::raw(&url).await;
    // A waiter that queued with grant terms, then died: its entry lapses in 300 ms.
    let now = server_ms(&mut raw).await;
    let dead = format!("{:032x}", rand::random::<u128>());
    let _: () = redis::pipe()
        .zadd(&queue, &dead, 1)
        .zadd(&expiry, &dead, now + 300)
        .hset(format!("{key}:queue:terms"), &dead, "60000 dead")
        .query_async(&mut raw)
        .await
        .expect("queue a dead waiter");
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move { waiter.acquire_timeout(&name, scaled_ms(20_000)).await })
    };
    tokio::time::sleep(scaled_ms(600)).await;
    let released = Instant::now();
    held.release().await.expect("release");
    let guard = waiting.await.expect("task").expect("granted");
    assert!(
        released.elapsed() < scaled_ms(1000),
        "granted {:?} after the release",
        released.elapsed()
    );
    let value: String = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("GET");
    assert!(
        !value.starts_with(&dead),
        "the dead waiter was granted the lock"
    );
    guard.release().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_that_missed_its_grant_finds_the_lock_its_own() {
    // A server of its own: the test closes every subscriber connection on it.
    let Some(server) = lock_testkit::require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let name = name("missed");
    let holder = connect(&url, Duration::from_secs(60)).await;
    // A short fallback timer: the waiter's next try comes 300 ms after its last.
    let waiter = connect(&url, Duration::from_millis(900)).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move { waiter.acquire_timeout(&name, scaled_ms(20_000)).await })
    };
    tokio::time::sleep(scaled_ms(300)).await;
    // The waiter's inbox connection goes; the release's message finds nobody.
    let mut raw = support::raw(&url).await;
    let _: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut raw)
        .await
        .expect("CLIENT KILL");
    held.release().await.expect("release");
    let guard = waiting.await.expect("task").expect("granted");
    let (key, fence_key, _) = holder.keys_for(&name);
    let (value, counter): (String, u64) = redis::pipe()
        .get(&key)
        .get(&fence_key)
        .query_async(&mut raw)
        .await
        .expect("read the lock");
    assert_eq!(
        counter,
        guard.fencing_token(),
        "the fence of the grant it missed"
    );
    assert_eq!(value.splitn(3, ' ').count(), 3, "value {value:?}");
    guard.release().await.expect("release");
    let gone: i64 = redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("EXISTS");
    assert_eq!(gone, 0, "the release left the key");
}
