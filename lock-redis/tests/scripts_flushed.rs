//! A server that lost its scripts (`SCRIPT FLUSH`, as after a restart or a failover to a
//! replica that never loaded them) answers `NOSCRIPT`: every script call then loads its script
//! and is sent again, so acquisitions, releases and renewals go on as before.

mod support;

use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::servers::RedisServer;
use support::commandstats::command_calls;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_load_their_script_again_after_a_flush() {
    let Some(server) = lock_testkit::require(RedisServer::start()) else {
        return;
    };
    let lock = lock_redis::RedisLock::builder(&server.url())
        .connect()
        .await
        .expect("connect");
    let held = lock.acquire("flushed").await.expect("acquire");
    let before = held.fencing_token();
    held.release().await.expect("release");
    server.command("SCRIPT FLUSH").expect("SCRIPT FLUSH");
    server
        .command("CONFIG RESETSTAT")
        .expect("CONFIG RESETSTAT");
    let held = lock
        .acquire_timeout("flushed", Duration::from_secs(5))
        .await
        .expect("acquire after the flush");
    assert!(held.fencing_token() > before, "the fence did not rise");
    server.command("SCRIPT FLUSH").expect("SCRIPT FLUSH");
    held.extend(Duration::from_secs(30))
        .await
        .expect("extend after a flush");
    server.command("SCRIPT FLUSH").expect("SCRIPT FLUSH");
    held.release().await.expect("release after a flush");
    let free = lock.try_acquire("flushed").await.expect("try");
    assert!(free.is_some(), "the lock stayed held after its release");
    let calls = command_calls(&server);
    assert!(
        calls.get("script|load").copied().unwrap_or(0) >= 3,
        "the scripts were not loaded again: {calls:?}"
    );
}
