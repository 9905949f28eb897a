//! Plain `SET key value NX PX` clients and this crate exclude each other both ways, and a
//! plain holder's expiry wakes our waiter through the PTTL fallback timer.

mod support;

use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, LockName};
use lock_redis::{RedisLock, redis};
use lock_testkit::{scaled, scaled_ms};
use tokio::time::Instant;

/// Now, in milliseconds since the Unix epoch.
fn unix_millis() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map_or(0, |now| now.as_millis() as u64)
}

fn name(case: &str) -> LockName {
    LockName::new(format!("interop/{case}/{:x}", rand::random::<u64>())).expect("valid name")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_set_nx_px_and_our_lock_exclude_each_other() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let mut raw = support::raw(&url).await;
    let name = name("both_ways");
    let (key, _, _) = lock.keys_for(&name);

    // Theirs blocks ours.
    let set: Option<String> = redis::cmd("SET")
        .arg(&key)
        .arg("plain-client")
        .arg("NX")
        .arg("PX")
        .arg(60_000)
        .query_async(&mut raw)
        .await
        .expect("plain SET");
    assert_eq!(set.as_deref(), Some("OK"));
    assert!(
        lock.try_acquire(&name).await.expect("try").is_none(),
        "granted over a plain SET NX holder"
    );
    let error = lock
        .acquire_timeout(&name, Duration::from_millis(300))
        .await
        .expect_err("waited into a plain holder's lock");
    assert_eq!(error.kind(), lock_core::ErrorKind::Timeout);
    let value: Option<String> = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("GET");
    assert_eq!(
        value.as_deref(),
        Some("plain-client"),
        "our failed acquire touched their key"
    );
    let _: i64 = redis::cmd("DEL")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("DEL");

    // Ours blocks theirs, and the key holds our token, the grant time and our owner label.
    let before = unix_millis();
    let guard = lock
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free lock");
    let after = unix_millis();
    let set: Option<String> = redis::cmd("SET")
        .arg(&key)
        .arg("plain-client")
        .arg("NX")
        .arg("PX")
        .arg(60_000)
        .query_async(&mut raw)
        .await
        .expect("plain SET");
    assert_eq!(set, None, "a plain SET NX took our held lock");
    let value: String = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("GET");
    let mut parts = value.splitn(3, ' ');
    let (token, granted, label) = (parts.next(), parts.next(), parts.next());
    assert!(
        token.is_some_and(
            |token| token.len() == 32 && token.bytes().all(|byte| byte.is_ascii_hexdigit())
        ),
        "the lock key should start with a 128-bit hex token: {value:?}"
    );
    let granted: u64 = granted
        .and_then(|granted| granted.parse().ok())
        .unwrap_or_else(|| panic!("no grant time in {value:?}"));
    // The server's clock: within a minute of ours (the same clock for a local server).
    assert!(
        granted + 60_000 >= before && granted <= after + 60_000,
        "grant time {granted} outside [{before}, {after}]: {value:?}"
    );
    assert_eq!(
        label,
        Some(&*lock.default_options().owner_label),
        "the lock key should end with the owner label: {value:?}"
    );
    guard.release().await.expect("release");
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("EXISTS");
    assert_eq!(exists, 0, "release left the key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiter_gets_the_lock_when_a_plain_holders_lease_expires() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let mut raw = support::raw(&url).await;
    let name = name("expiry");
    let (key, _, _) = lock.keys_for(&name);
    let lease = scaled_ms(800);
    let _: Option<String> = redis::cmd("SET")
        .arg(&key)
        .arg("plain-client")
        .arg("NX")
        .arg("PX")
        .arg(lease.as_millis() as u64)
        .query_async(&mut raw)
        .await
        .expect("plain SET");
    let started = Instant::now();
    let guard = lock
        .acquire_timeout(&name, scaled_ms(10_000))
        .await
        .expect("acquire after the plain holder's expiry");
    let waited = started.elapsed();
    // A plain holder never publishes: the PTTL timer alone must wake us, soon after expiry.
    assert!(
        waited >= lease - Duration::from_millis(50),
        "acquired after {waited:?}, before expiry"
    );
    assert!(
        waited <= lease + scaled(Duration::from_millis(300)),
        "acquired {waited:?} after a {lease:?} lease"
    );
    guard.release().await.expect("release");
}
