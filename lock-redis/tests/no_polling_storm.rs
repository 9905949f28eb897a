//! While 32 clients wait on a held lock, the server sees a few commands per waiter, not a
//! polling storm (counted from `INFO commandstats` on a server of its own).

mod support;

use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::servers::RedisServer;
use support::commandstats::command_calls;

/// The commands the lock's scripts run inside the server.
const SCRIPT_INTERNAL: &[&str] = &[
    "time",
    "zrangebyscore",
    "zrem",
    "zrange",
    "zadd",
    "zscore",
    "set",
    "incr",
    "pttl",
    "get",
    "del",
    "exists",
    "publish",
    "pexpire",
    "hset",
    "hget",
    "hdel",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_waiters_cost_a_few_commands_each() {
    const WAITERS: u64 = 32;
    /// First try, SUBSCRIBE, second try, the try when the wait ends, leaving the queue,
    /// UNSUBSCRIBE, and one spare; a 1 ms poller would send about 2000.
    const BOUND_PER_WAITER: u64 = 7;
    let Some(server) = lock_testkit::require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let holder = lock_redis::RedisLock::builder(&url)
        .connect()
        .await
        .expect("connect holder");
    // Load the scripts once, so the count below holds no one-time SCRIPT LOADs.
    let warm = holder
        .try_acquire("warm-up")
        .await
        .expect("try")
        .expect("free");
    warm.release().await.expect("release");
    let held = holder
        .try_acquire("storm")
        .await
        .expect("try")
        .expect("free");
    let mut clients = Vec::new();
    for _ in 0..WAITERS {
        clients.push(
            lock_redis::RedisLock::builder(&url)
                .connect()
                .await
                .expect("connect waiter"),
        );
    }
    server
        .command("CONFIG RESETSTAT")
        .expect("CONFIG RESETSTAT");
    let wait = Duration::from_secs(2);
    let waiters: Vec<_> = clients
        .into_iter()
        .map(|client| {
            tokio::spawn(async move { client.acquire_timeout("storm", wait).await.map(drop) })
        })
        .collect();
    for waiter in waiters {
        let error = waiter
            .await
            .expect("waiter task")
            .expect_err("granted a held lock");
        assert_eq!(error.kind(), lock_core::ErrorKind::Timeout, "{error}");
    }
    let calls = command_calls(&server);
    let count = |name: &str| calls.get(name).copied().unwrap_or(0);
    // commandstats also counts the commands a script runs. Those are internal, except that a
    // script SETs only when it grants; a SET beyond that was sent by a client polling plainly.
    assert!(
        count("set") <= count("evalsha"),
        "plain SETs were sent: {calls:?}"
    );
    let in_scripts: u64 = SCRIPT_INTERNAL.iter().map(|name| count(name)).sum();
    let sent: u64 = calls
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "info" | "config|resetstat"))
        .map(|(_, calls)| calls)
        .sum::<u64>()
        - in_scripts;
    eprintln!(
        "commands sent while {WAITERS} clients waited {wait:?}: {sent} ({:.1} per waiter); \
         with the script-internal ones: {}; {calls:?}",
        sent as f64 / WAITERS as f64,
        sent + in_scripts
    );
    assert!(
        sent <= WAITERS * BOUND_PER_WAITER,
        "{sent} commands for {WAITERS} waiters over {wait:?} (bound {}): {calls:?}",
        WAITERS * BOUND_PER_WAITER
    );
    assert!(
        count("evalsha") >= WAITERS,
        "the waiters did not try: {calls:?}"
    );
    assert!(
        count("subscribe") <= WAITERS,
        "a waiter subscribed more than once: {calls:?}"
    );
    held.release().await.expect("release");
}
