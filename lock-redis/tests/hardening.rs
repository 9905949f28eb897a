//! Faults outside the lock's own making: a replica that lags behind `WAIT`, a peer that goes
//! silent with the connection open, a queue key half evicted, a server that may evict keys,
//! and a port where something other than Redis answers.

mod support;

use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, ErrorKind, LockName, ServiceBuilder};
use lock_redis::{RedisLock, redis};
use lock_testkit::faults::FaultProxy;
use lock_testkit::servers::RedisServer;
use lock_testkit::{require, scaled_ms};
use tokio::time::Instant;

fn name(case: &str) -> LockName {
    LockName::new(format!("hardening/{case}/{:x}", rand::random::<u64>())).expect("valid name")
}

/// While a grant waits 2.5 s for a lagging replica, another hold of the same service, on a
/// 600 ms lease, keeps renewing on time: `WAIT` blocks only its own connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_replica_stalls_no_renewal_of_other_holds() {
    let Some((master, mut replica)) = support::master_and_replica() else {
        return;
    };
    let lock = RedisLock::builder(&master.url())
        .wait_for_replicas(1, Duration::from_millis(2500))
        .connect()
        .await
        .expect("connect");
    let options = AcquireOptions::builder()
        .lease(Duration::from_millis(600))
        .wait(Duration::ZERO)
        .build()
        .expect("options");
    let held = lock
        .acquire_with_options(name("held"), &options)
        .await
        .expect("acquire")
        .expect("free");
    replica.process().pause().expect("SIGSTOP replica");
    let lagging = {
        let lock = lock.clone();
        tokio::spawn(async move { lock.try_acquire(name("lagging")).await.map(drop) })
    };
    let refused = lagging
        .await
        .expect("task")
        .expect_err("acknowledged by a paused replica");
    assert_eq!(refused.kind(), ErrorKind::Unavailable, "{refused}");
    assert!(
        !held.is_lost() && !held.is_at_risk(),
        "a renewal queued behind WAIT: the hold was declared lost while the server still had it"
    );
    replica.process().resume().expect("SIGCONT replica");
    held.release().await.expect("release");
}

/// A permit or write hold that the replica does not acknowledge is refused and given back:
/// while the replica is paused, the one permit and the write hold are refused; once it
/// resumes, both are free at once (nothing was left taken), and granted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unacknowledged_permits_and_write_holds_are_refused_and_given_back() {
    use lock_core::{RwLockExt, SemaphoreExt};
    let Some((master, mut replica)) = support::master_and_replica() else {
        return;
    };
    let lock = RedisLock::builder(&master.url())
        .wait_for_replicas(1, Duration::from_millis(300))
        .connect()
        .await
        .expect("connect");
    let (permits, rw) = (name("permits"), name("rw"));
    replica.process().pause().expect("SIGSTOP replica");
    let refusals = [
        lock.try_acquire_permit(&permits, 1).await.map(drop),
        lock.try_write(&rw).await.map(drop),
    ];
    replica.process().resume().expect("SIGCONT replica");
    for refused in refusals {
        let error = refused.expect_err("granted without the replica");
        assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
        assert!(
            error.to_string().contains("0 of the 1 required replicas"),
            "{error}"
        );
    }
    let permit = lock.try_acquire_permit(&permits, 1).await.expect("acquire");
    permit
        .expect("the refused permit was left taken")
        .release()
        .await
        .expect("release");
    let write = lock.try_write(&rw).await.expect("acquire");
    write
        .expect("the refused write hold was left taken")
        .release()
        .await
        .expect("release");
}

/// Connections that go silent (bytes held, sockets open) cost one operation timeout: the next
/// command opens a new connection, which works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_peer_is_replaced_within_the_operation_timeout() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let upstream = format!("127.0.0.1:{}", server.port())
        .parse()
        .expect("address");
    let proxy = FaultProxy::start(upstream).await;
    let timeout = Duration::from_millis(500);
    let lock = RedisLock::builder(&format!("redis://{}", proxy.addr()))
        .connect_timeout(timeout)
        .operation_timeout(timeout)
        .connect()
        .await
        .expect("connect");
    let before = lock
        .try_acquire(name("before"))
        .await
        .expect("try")
        .expect("free");
    before.release().await.expect("release");
    proxy.stall_open_connections();
    let silenced = Instant::now();
    let mut last = None;
    while silenced.elapsed() < scaled_ms(4000) {
        match lock.try_acquire(name("after")).await {
            Ok(Some(guard)) => {
                let recovered = silenced.elapsed();
                assert!(
                    recovered <= timeout * 2 + scaled_ms(500),
                    "recovered after {recovered:?}"
                );
                return guard.release().await.expect("release");
            }
            other => last = Some(format!("{:?}", other.map(|guard| guard.is_some()))),
        }
    }
    panic!(
        "still failing 4 s after the peer went silent (operation timeout {timeout:?}): {last:?}"
    );
}

/// A queued waiter whose expiry entry is gone (an evicted or deleted expiry set) is dropped
/// from the queue instead of failing every acquire script (or blocking the queue for good).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_entry_without_expiry_is_dropped() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let lock_name = name("zscore");
    let (queue, _) = support::raw_keys(&lock, &lock_name);
    let mut raw = support::raw(&url).await;
    let _: i64 = redis::cmd("ZADD")
        .arg(&queue)
        .arg(1)
        .arg("a-waiter-long-gone")
        .query_async(&mut raw)
        .await
        .expect("ZADD");
    let guard = lock.try_acquire(&lock_name).await.expect("acquire script");
    guard
        .expect("the orphaned entry still blocks the queue")
        .release()
        .await
        .expect("release");
}

/// A server that may evict keys under memory pressure is refused, naming the setting; with
/// `allow_eviction=true` it is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicting_server_is_refused_unless_allowed() {
    let args = ["--maxmemory-policy".to_owned(), "allkeys-lru".to_owned()];
    let Some(server) = require(RedisServer::start_with(&args)) else {
        return;
    };
    let error = RedisLock::builder(&server.url())
        .connect()
        .await
        .expect_err("a server that may evict lock keys was accepted");
    assert_eq!(error.kind(), ErrorKind::Unsupported, "{error}");
    assert!(
        error.to_string().contains("allkeys-lru") && error.to_string().contains("allow_eviction"),
        "{error}"
    );
    let allowed = RedisLock::builder(&format!("{}?allow_eviction=true", server.url()))
        .connect()
        .await;
    assert!(allowed.is_ok(), "{allowed:?}");
}

/// A port where an HTTP server answers is named as not speaking Redis, within the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_not_redis_is_named_so() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
        }
    });
    let started = Instant::now();
    let error = RedisLock::builder(&format!("redis://{addr}"))
        .connect_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect_err("HTTP accepted as Redis");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(
        error
            .to_string()
            .contains("does not speak the Redis protocol"),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

/// A waiter TTL or a `WAIT` timeout longer than a day (the longest lease) is refused with
/// `InvalidInput` before any I/O, instead of reaching the server as an expiry it rejects or an
/// endless `WAIT`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_durations_beyond_a_day_are_invalid_input() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let huge = format!("{}ms", u64::MAX);
    for query in [
        format!("waiter_ttl={huge}"),
        format!("wait_replicas=1&wait_timeout={huge}"),
        "waiter_ttl=25h".to_owned(),
    ] {
        let url = format!("{}?{query}", server.url());
        let connecting = tokio::spawn(async move { RedisLock::builder(&url).connect().await });
        let outcome = tokio::time::timeout(Duration::from_secs(10), connecting).await;
        let outcome = outcome
            .expect("connect returned in time")
            .expect("connect panicked");
        let error = outcome.map(drop).expect_err(&format!("{query} accepted"));
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{query}: {error}");
    }
}
