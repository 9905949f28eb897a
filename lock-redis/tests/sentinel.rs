//! Redis behind Sentinels (a primary, two replicas, three Sentinels): the conformance suite
//! through `redis+sentinel://`, and failovers. After one, new acquisitions go to the promoted
//! replica; a hold it received keeps holding; a hold it never received is lost (the renewal
//! finds no key) and the lost signal fires, while fencing tokens keep rising.

mod support;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLock, DistributedLockExt, LockName};
use lock_redis::RedisLock;
use lock_testkit::servers::RedisSentinel;
use lock_testkit::{ConformanceTarget, require};
use support::target::RedisTarget;

/// The Sentinel set of the conformance suite, which no test fails over.
fn steady() -> Option<&'static RedisSentinel> {
    static SET: OnceLock<Option<RedisSentinel>> = OnceLock::new();
    SET.get_or_init(|| require(RedisSentinel::start(2, 3)))
        .as_ref()
}

async fn sentinel_target() -> Option<Arc<dyn ConformanceTarget>> {
    let set = steady()?;
    // The suite deletes keys behind the lock's back on the primary itself.
    let admin = Some(format!("redis://127.0.0.1:{}", set.primary_port()?));
    Some(Arc::new(RedisTarget::new(set.url(), String::new(), admin)))
}

mod conformance {
    use super::*;

    lock_testkit::conformance_tests!(sentinel_target());
}

/// A Sentinel set of its own for the failover test, which promotes a replica.
fn failing_over() -> Option<&'static Mutex<RedisSentinel>> {
    static SET: OnceLock<Option<Mutex<RedisSentinel>>> = OnceLock::new();
    SET.get_or_init(|| require(RedisSentinel::start(2, 3)).map(Mutex::new))
        .as_ref()
}

/// A lease that outlasts the failover's own outage (the Sentinels need a few seconds to
/// promote a replica), renewed every 2 s.
fn lease() -> AcquireOptions {
    AcquireOptions::builder()
        .lease(Duration::from_secs(6))
        .wait(Duration::from_secs(5))
        .build()
        .expect("valid options")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_failover_holds_the_replica_lacks_are_lost_and_tokens_rise() {
    let Some(set) = failing_over() else { return };
    let (url, old_primary) = {
        let set = set.lock().expect("set");
        (set.url(), set.primary_port().expect("a primary"))
    };
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let (kept, dropped) = (
        LockName::new("sentinel/kept").expect("name"),
        LockName::new("sentinel/dropped").expect("name"),
    );
    let kept_guard = lock
        .acquire_with_options(&kept, &lease())
        .await
        .expect("acquire")
        .expect("granted");
    let dropped_guard = lock
        .acquire_with_options(&dropped, &lease())
        .await
        .expect("acquire")
        .expect("granted");
    // The replicas lose `dropped`'s key, as if its grant had never reached them.
    let (key, _, _) = lock.keys_for(&dropped);
    {
        let set = set.lock().expect("set");
        for replica in &set.servers()[1..] {
            for line in [
                "CONFIG SET replica-read-only no".to_owned(),
                format!("DEL {key}"),
            ] {
                replica.command(&line).expect("replica command");
            }
        }
    }
    let promoted = tokio::task::spawn_blocking(move || set.lock().expect("set").fail_over());
    let new_primary = promoted.await.expect("task").expect("failover");
    assert_ne!(new_primary, old_primary);

    let lost = tokio::time::timeout(Duration::from_secs(10), dropped_guard.lost().cancelled());
    assert!(
        lost.await.is_ok(),
        "the hold the replica lacked was not lost"
    );
    // Two renewals later, the hold the replica received is still renewed, on the replica.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!kept_guard.is_lost(), "the replicated hold was lost");

    let other = RedisLock::builder(&url).connect().await.expect("connect");
    let regranted = other
        .acquire_timeout(&dropped, Duration::from_secs(10))
        .await
        .expect("the promoted replica grants the lost lock");
    assert!(
        regranted.fencing_token() > dropped_guard.fencing_token(),
        "fencing token {} after {}",
        regranted.fencing_token(),
        dropped_guard.fencing_token()
    );
    let on_new_primary = support::raw(&format!("redis://127.0.0.1:{new_primary}")).await;
    let mut on_new_primary = on_new_primary;
    let exists: i64 = lock_redis::redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut on_new_primary)
        .await
        .expect("EXISTS");
    assert_eq!(exists, 1, "the new grant is not on the promoted replica");
    regranted.release().await.expect("release");
    kept_guard.release().await.expect("release the kept hold");
    drop(dropped_guard);
    let _: &dyn DistributedLock = &lock;
}
