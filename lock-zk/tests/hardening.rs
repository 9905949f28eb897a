//! Faults the recipe must survive without leaving anything behind or believing too long: an
//! acquire dropped while its create is unanswered, a one-way partition, and a session that
//! must be reopened while several callers wait.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::faults::{Fault, FaultProxy};
use lock_testkit::scaled_ms;
use support::{eventually_async, lock_nodes, unique};
use tokio::time::Instant;

const SESSION: Duration = Duration::from_millis(2000);

fn server() -> Option<(String, SocketAddr)> {
    let url = support::server_url(Duration::from_millis(200))?;
    let upstream = SocketAddr::from(([127, 0, 0, 1], support::server_port(&url)));
    Some((url, upstream))
}

/// An acquire dropped while its create reached the server but the answer did not (replies
/// dropped, then the connection reset) leaves no node: the cleanup finds the node by its
/// protected prefix once it can, and the lock passes to the next client.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_acquire_dropped_with_its_create_unanswered_leaves_no_node() {
    let Some((url, upstream)) = server() else {
        return;
    };
    let proxy = FaultProxy::start(upstream).await;
    let lock = support::connect(&format!("zk://{}?session_timeout=10s", proxy.addr())).await;
    let other = support::connect(&url).await;
    let name = unique("orphan");
    let held = other.acquire(&name).await.expect("acquire");
    proxy.set(Fault::DropReplies);
    let attempt = tokio::time::timeout(Duration::from_millis(300), lock.acquire(&name)).await;
    assert!(attempt.is_err(), "the acquire finished without replies");
    tokio::time::sleep(Duration::from_millis(100)).await;
    proxy.set(Fault::Pass);
    proxy.reset_connections();
    held.release().await.expect("release");
    eventually_async(
        scaled_ms(5000),
        "the dropped acquire's node gone",
        || async { lock_nodes(&other, &name).await.is_empty() },
    )
    .await;
    let next = other.acquire_timeout(&name, scaled_ms(5000)).await;
    next.expect("the lock passes on")
        .release()
        .await
        .expect("release");
}

/// A holder that still hears the server but can no longer be heard (requests dropped, replies
/// and watch notifications still arriving) fires its lost signal before the session can
/// expire: only answers to its own requests count as signs of life.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_one_way_partition_fires_lost_before_the_session_can_expire() {
    let Some((url, upstream)) = server() else {
        return;
    };
    let proxy = FaultProxy::start(upstream).await;
    let holder_url = format!(
        "zk://{}?session_timeout={}ms",
        proxy.addr(),
        SESSION.as_millis()
    );
    let holder = Arc::new(support::connect(&holder_url).await);
    let other = support::connect(&url).await;
    let guard = holder.acquire(unique("one-way")).await.expect("acquire");
    // Waiters of the holder's session, each watching a node of `other`: their notifications
    // keep arriving at the holder after it can no longer send.
    let mut blockers = Vec::new();
    for i in 0..40 {
        let name = unique(&format!("one-way/{i}"));
        blockers.push(other.acquire(&name).await.expect("blocker"));
        let holder = Arc::clone(&holder);
        tokio::spawn(async move { holder.acquire_timeout(&name, Duration::from_secs(30)).await });
    }
    tokio::time::sleep(scaled_ms(500)).await;
    proxy.set(Fault::DropRequests);
    let muted = Instant::now();
    let releasing = tokio::spawn(async move {
        for blocker in blockers {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let _ = blocker.release().await;
        }
    });
    let fired = tokio::time::timeout(SESSION * 3, guard.lost().cancelled()).await;
    let after = muted.elapsed();
    releasing.abort();
    assert!(fired.is_ok(), "lost never fired");
    assert!(
        after < SESSION,
        "lost fired {after:?} after the holder went mute; the session ({SESSION:?}) may have expired first"
    );
}

/// Callers that find the session ended share one reopening, each bounded by its own wait:
/// five acquires with a 500 ms wait against an unreachable ensemble all return within about
/// one connect timeout, not five.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn callers_reopening_a_session_share_it_and_keep_their_own_deadline() {
    let Some((_, upstream)) = server() else {
        return;
    };
    let proxy = FaultProxy::start(upstream).await;
    let url = format!(
        "zk://{}?session_timeout=2000ms&connect_timeout=1000ms",
        proxy.addr()
    );
    let lock = Arc::new(support::connect(&url).await);
    let guard = lock.acquire(unique("reopen")).await.expect("acquire");
    proxy.cut();
    tokio::time::timeout(SESSION * 3, guard.lost().cancelled())
        .await
        .expect("lost once cut off");
    let started = Instant::now();
    let calls: Vec<_> = (0..5)
        .map(|i| {
            let lock = Arc::clone(&lock);
            tokio::spawn(async move {
                let outcome = lock
                    .acquire_timeout(unique(&format!("reopen/{i}")), Duration::from_millis(500))
                    .await;
                (Instant::now(), outcome.map(drop))
            })
        })
        .collect();
    for call in calls {
        let (done, outcome) = call.await.expect("task");
        let error = outcome.expect_err("acquired without a session");
        assert_eq!(error.kind(), lock_core::ErrorKind::Unavailable, "{error}");
        let took = done - started;
        assert!(took < scaled_ms(1500), "a caller returned after {took:?}");
    }
}

/// A session timeout longer than the longest lease (a day; the protocol itself carries
/// milliseconds in an `i32`) is refused with `InvalidInput` before any I/O: never a panic,
/// never a timeout wrapped into another one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_timeout_beyond_the_protocol_is_invalid_input() {
    let Some((url, _)) = server() else {
        return;
    };
    let beyond = u64::from(i32::MAX.unsigned_abs()) + 1;
    for millis in [24 * 3600 * 1000 + 1, beyond, u64::MAX] {
        let separator = if url.contains('?') { '&' } else { '?' };
        let url = format!("{url}{separator}session_timeout={millis}ms");
        let connecting =
            tokio::spawn(async move { lock_zk::ZkLock::builder(&url).connect().await });
        let outcome = tokio::time::timeout(Duration::from_secs(10), connecting).await;
        let outcome = outcome
            .expect("connect returned in time")
            .expect("connect panicked");
        let error = outcome.map(drop).expect_err("session_timeout accepted");
        assert_eq!(error.kind(), lock_core::ErrorKind::InvalidInput, "{error}");
        assert!(error.to_string().contains("session_timeout"), "{error}");
    }
}
