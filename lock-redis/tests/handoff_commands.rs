//! Under contention every grant costs two scripts on the server: the waiter's join and the
//! release that hands the lock over. Each runs as few commands as its job needs, because the
//! server's time per grant bounds a contended lock's throughput:
//! - a join while the lock is held adds the entry and reads the lock's expiry; it does not look
//!   for the queue's head or for waiters that stopped refreshing (that matters only once the
//!   lock is free);
//! - a release by the holder deletes the lock, grants it to the first waiter and publishes the
//!   grant; it checks that waiter alone for staleness, and has no queue entry of its own to drop.
//!
//! Counted from `INFO commandstats` on a server of its own.

mod support;

use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_redis::redis;
use lock_testkit::servers::RedisServer;
use support::commandstats::command_calls;

/// The commands the lock's scripts call: what a script run costs the server beyond itself.
const SCRIPT_COMMANDS: &[&str] = &[
    "time",
    "exists",
    "get",
    "set",
    "del",
    "pexpire",
    "pttl",
    "zadd",
    "zrem",
    "zrange",
    "zrangebyscore",
    "zscore",
    "hset",
    "hget",
    "hdel",
    "publish",
];

/// The script runs and the commands they called since the last `CONFIG RESETSTAT`.
fn script_work(server: &RedisServer) -> (u64, u64, String) {
    let calls = command_calls(server);
    let commands = SCRIPT_COMMANDS
        .iter()
        .map(|name| calls.get(*name).copied().unwrap_or(0))
        .sum();
    let scripts = calls.get("evalsha").copied().unwrap_or(0);
    (scripts, commands, format!("{calls:?}"))
}

/// Starts `lock`'s wait for `name` and returns once its entry is in the queue, the `queued`th.
async fn queue_behind(
    lock: &lock_redis::RedisLock,
    name: &'static str,
    raw: &mut redis::aio::MultiplexedConnection,
    queued: u64,
) -> tokio::task::JoinHandle<lock_core::Result<lock_core::LockGuard>> {
    let lock = lock.clone();
    let waiter =
        tokio::spawn(async move { lock.acquire_timeout(name, Duration::from_secs(10)).await });
    // The queue key under the default prefix (see the crate docs' key table), watched with
    // ZCARD, which no script calls.
    let queue = format!("{{distlock:{name}}}:queue");
    let queued_by = tokio::time::Instant::now() + lock_testkit::scaled(Duration::from_secs(5));
    loop {
        let entries: u64 = redis::cmd("ZCARD")
            .arg(&queue)
            .query_async(raw)
            .await
            .expect("ZCARD");
        if entries == queued {
            return waiter;
        }
        assert!(
            tokio::time::Instant::now() < queued_by,
            "waiter {queued} never queued for {name}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn connect(url: &str) -> lock_redis::RedisLock {
    lock_redis::RedisLock::builder(url)
        .connect()
        .await
        .expect("connect")
}

/// Two services wait for `name` held by `holder`, one behind the other, and take it in turn:
/// afterwards the scripts are loaded and each service's inbox is subscribed (its first wait
/// subscribes, then tries again), so the counts that follow hold no one-time work.
async fn warm_up(
    holder: &lock_redis::RedisLock,
    waiters: [&lock_redis::RedisLock; 2],
    raw: &mut redis::aio::MultiplexedConnection,
) {
    let held = holder
        .try_acquire("warm-up")
        .await
        .expect("try")
        .expect("free");
    let first = queue_behind(waiters[0], "warm-up", raw, 1).await;
    let second = queue_behind(waiters[1], "warm-up", raw, 2).await;
    held.release().await.expect("release");
    for waiter in [first, second] {
        let guard = waiter.await.expect("waiter task").expect("waiter acquire");
        guard.release().await.expect("release");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_and_a_handoff_run_few_commands() {
    let Some(server) = lock_testkit::require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let (holder, first, second) = (
        connect(&url).await,
        connect(&url).await,
        connect(&url).await,
    );
    let mut raw = redis::Client::open(url.as_str())
        .expect("url")
        .get_multiplexed_async_connection()
        .await
        .expect("raw connection");
    warm_up(&holder, [&first, &second], &mut raw).await;
    let held = holder
        .try_acquire("busy")
        .await
        .expect("try")
        .expect("free");
    let first = queue_behind(&first, "busy", &mut raw, 1).await;
    // The second waiter's join, as each waiter's under steady contention: the queue exists.
    server
        .command("CONFIG RESETSTAT")
        .expect("CONFIG RESETSTAT");
    let second = queue_behind(&second, "busy", &mut raw, 2).await;
    let (scripts, commands, calls) = script_work(&server);
    assert_eq!(scripts, 1, "the waiter's try and join: {calls}");
    // TIME, EXISTS (queue), GET (lock: whose), ZADD x2, HSET, PEXPIRE x3, PTTL.
    assert!(commands <= 10, "a join ran {commands} commands: {calls}");

    server
        .command("CONFIG RESETSTAT")
        .expect("CONFIG RESETSTAT");
    let held_fence = held.fencing_token();
    held.release().await.expect("release");
    let next = tokio::time::timeout(lock_testkit::scaled(Duration::from_secs(1)), first)
        .await
        .expect("the waiter took the lock well before its fallback timer")
        .expect("waiter task")
        .expect("waiter acquire");
    assert!(next.fencing_token() > held_fence, "fence did not rise");
    let (scripts, commands, calls) = script_work(&server);
    assert_eq!(scripts, 1, "the handoff is the release alone: {calls}");
    // EXISTS (queue), GET + DEL (lock), ZRANGE + ZSCORE (the head and its expiry), HGET (its
    // terms), SET (its grant), GET + SET (fence), ZREM x2 + HDEL (its entries), PUBLISH.
    assert!(commands <= 14, "a handoff ran {commands} commands: {calls}");
    next.release().await.expect("release");
    let last = second.await.expect("waiter task").expect("waiter acquire");
    last.release().await.expect("release");
}
