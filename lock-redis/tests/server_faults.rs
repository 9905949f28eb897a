//! Server faults: a lost pub/sub connection, a restarted server, and a paused server under a
//! live guard.

use lock_core::ServiceBuilder;
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, ErrorKind};
use lock_testkit::servers::RedisServer;
use lock_testkit::{require, scaled, scaled_ms};
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiter_survives_a_killed_subscriber_connection() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let (holder, waiter) = (
        lock_redis::RedisLock::builder(&server.url())
            .connect()
            .await
            .expect("connect"),
        lock_redis::RedisLock::builder(&server.url())
            .connect()
            .await
            .expect("connect"),
    );
    let held = holder
        .try_acquire("sub-killed")
        .await
        .expect("try")
        .expect("free");
    let waiting = tokio::spawn(async move {
        waiter
            .acquire_timeout("sub-killed", scaled_ms(10_000))
            .await
    });
    tokio::time::sleep(scaled_ms(300)).await;
    let killed = server
        .command("CLIENT KILL TYPE pubsub")
        .expect("CLIENT KILL");
    assert!(
        killed.starts_with(":1"),
        "no subscriber connection to kill: {killed}"
    );
    tokio::time::sleep(scaled_ms(100)).await;
    let released_at = Instant::now();
    held.release().await.expect("release");
    let guard = waiting.await.expect("waiter task").expect("waiter acquire");
    let handoff = released_at.elapsed();
    // Polling with the default backoff (at most 500 ms) or the resubscribed wake-up.
    assert!(
        handoff <= scaled_ms(1500),
        "handoff took {handoff:?} without pub/sub"
    );
    guard.release().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_works_again_after_a_server_restart() {
    let Some(mut server) = require(RedisServer::start()) else {
        return;
    };
    let lock = lock_redis::RedisLock::builder(&server.url())
        .connect()
        .await
        .expect("connect");
    lock.try_acquire("restart")
        .await
        .expect("try")
        .expect("free")
        .release()
        .await
        .expect("release");
    server.restart().expect("restart");
    let started = Instant::now();
    loop {
        match lock.try_acquire("restart").await {
            Ok(granted) => {
                granted
                    .expect("free after restart")
                    .release()
                    .await
                    .expect("release");
                break;
            }
            Err(error) => {
                assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
                assert!(started.elapsed() < scaled_ms(5000), "no reconnect: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_server_fires_lost_by_the_lease_end_and_acquire_times_out() {
    let Some(mut server) = require(RedisServer::start()) else {
        return;
    };
    let timeout = Duration::from_millis(300);
    // A command after a timed-out one reconnects first, within the connect timeout.
    let lock = lock_redis::RedisLock::builder(&server.url())
        .connect_timeout(timeout)
        .operation_timeout(timeout)
        .connect()
        .await
        .expect("connect");
    let lease = scaled_ms(900);
    let options = AcquireOptions::builder()
        .lease(lease)
        .wait(Duration::ZERO)
        .build()
        .expect("options");
    let granted_before = Instant::now();
    let guard = lock
        .acquire_with_options("paused", &options)
        .await
        .expect("acquire")
        .expect("free");
    server.process().pause().expect("SIGSTOP");
    // Renewals time out; the local clock ends the hold at the lease end at the latest.
    let fired = tokio::time::timeout(lease + scaled_ms(500), guard.lost().cancelled()).await;
    let after = granted_before.elapsed();
    assert!(
        fired.is_ok(),
        "lost did not fire while the server was paused"
    );
    assert!(
        after <= lease + scaled(Duration::from_millis(300)),
        "lost fired after {after:?}"
    );
    let started = Instant::now();
    let error = lock
        .try_acquire("other")
        .await
        .expect_err("acquired on a paused server");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(
        started.elapsed() <= timeout * 2 + scaled_ms(300),
        "took {:?}",
        started.elapsed()
    );
    server.process().resume().expect("SIGCONT");
    drop(guard);
}

/// A restart without persistence forgets the fence counter with everything else; the server
/// clock floors every token, so the next grant still gets a larger one and a fenced resource
/// keeps refusing the forgotten holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_tokens_keep_rising_across_a_restart_that_loses_the_data() {
    let Some(mut server) = require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let before = {
        let lock = lock_redis::RedisLock::builder(&url)
            .connect()
            .await
            .expect("connect");
        let mut last = 0;
        for _ in 0..3 {
            let guard = lock.acquire("restart-fence").await.expect("acquire");
            assert!(guard.fencing_token() > last, "tokens did not rise");
            last = guard.fencing_token();
            guard.release().await.expect("release");
        }
        last
    };
    server.restart().expect("restart");
    let lock = lock_redis::RedisLock::builder(&url)
        .connect()
        .await
        .expect("reconnect");
    let guard = lock
        .acquire("restart-fence")
        .await
        .expect("acquire after restart");
    assert!(
        guard.fencing_token() > before,
        "token {} after the restart is not above {before} from before it",
        guard.fencing_token()
    );
    guard.release().await.expect("release");
}
