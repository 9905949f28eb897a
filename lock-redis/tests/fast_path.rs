//! With no waiter queued, an acquire + release pair is one script each: a clock read, `SET NX
//! PX` and the fence counter's `GET` + `SET`, then a compare-and-delete; no queue upkeep, no
//! `PUBLISH`. With a waiter queued, the
//! release still names it on the channel. Counted from `INFO commandstats` on a server of its
//! own.

mod support;

use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_redis::redis;
use lock_testkit::servers::RedisServer;
use support::commandstats::command_calls;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncontended_pairs_skip_the_queue_and_waiters_are_still_woken() {
    const PAIRS: u64 = 20;
    let Some(server) = lock_testkit::require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let lock = lock_redis::RedisLock::builder(&url)
        .connect()
        .await
        .expect("connect");
    // Load the scripts once, so the counts below hold no one-time SCRIPT LOADs.
    lock.try_acquire("warm-up")
        .await
        .expect("try")
        .expect("free")
        .release()
        .await
        .expect("release");
    server
        .command("CONFIG RESETSTAT")
        .expect("CONFIG RESETSTAT");
    let mut last_fence = 0;
    for _ in 0..PAIRS {
        let guard = lock
            .acquire_timeout("quiet", Duration::from_secs(5))
            .await
            .expect("uncontended acquire");
        assert!(guard.fencing_token() > last_fence, "fence did not rise");
        last_fence = guard.fencing_token();
        guard.release().await.expect("release");
    }
    let calls = command_calls(&server);
    let count = |name: &str| calls.get(name).copied().unwrap_or(0);
    assert_eq!(count("evalsha"), 2 * PAIRS, "{calls:?}");
    // Per pair: the lock's SET NX PX and the fence counter's SET, one DEL.
    assert_eq!(
        (count("set"), count("del")),
        (2 * PAIRS, PAIRS),
        "{calls:?}"
    );
    for skipped in ["publish", "zrange", "zrangebyscore", "zrem", "zadd"] {
        assert_eq!(
            count(skipped),
            0,
            "{skipped} ran without waiters: {calls:?}"
        );
    }

    // A queued waiter: the release takes the queue path and wakes it by name.
    let held = lock.try_acquire("quiet").await.expect("try").expect("free");
    assert!(held.fencing_token() > last_fence, "fence did not rise");
    let waiter_lock = lock_redis::RedisLock::builder(&url)
        .connect()
        .await
        .expect("connect waiter");
    let waiter = tokio::spawn(async move {
        waiter_lock
            .acquire_timeout("quiet", Duration::from_secs(10))
            .await
    });
    let mut raw = redis::Client::open(url.as_str())
        .expect("url")
        .get_multiplexed_async_connection()
        .await
        .expect("raw connection");
    // The queue key of lock "quiet" under the default prefix (see the crate docs' key table).
    let queue = "{distlock:quiet}:queue";
    let queued_by = tokio::time::Instant::now() + lock_testkit::scaled(Duration::from_secs(5));
    loop {
        let queued: bool = redis::cmd("EXISTS")
            .arg(queue)
            .query_async(&mut raw)
            .await
            .expect("EXISTS");
        if queued {
            break;
        }
        assert!(
            tokio::time::Instant::now() < queued_by,
            "the waiter never queued"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server
        .command("CONFIG RESETSTAT")
        .expect("CONFIG RESETSTAT");
    let held_fence = held.fencing_token();
    held.release().await.expect("release");
    let next = tokio::time::timeout(lock_testkit::scaled(Duration::from_secs(1)), waiter)
        .await
        .expect("the woken waiter took the lock well before its fallback timer")
        .expect("waiter task")
        .expect("waiter acquire");
    assert!(next.fencing_token() > held_fence, "fence did not rise");
    let calls = command_calls(&server);
    assert!(
        calls.get("publish").copied().unwrap_or(0) >= 1,
        "a release with a waiter queued did not publish: {calls:?}"
    );
    next.release().await.expect("release");
}
