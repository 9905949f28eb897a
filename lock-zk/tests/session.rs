//! Session-aware holds against a real ZooKeeper with a 200 ms tick: suspension on disconnect,
//! loss on session expiry, and a crashed holder process replaced after its session timeout.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::faults::{Fault, FaultProxy};
use lock_testkit::scaled_ms;
use lock_zk::zookeeper_client::Client;
use support::{eventually, unique};
use tokio::time::Instant;

const TICK: Duration = Duration::from_millis(200);
const SESSION: Duration = Duration::from_millis(2000);

fn server() -> Option<String> {
    support::server_url(TICK)
}

/// A lost connection marks the hold suspended, not lost; reconnecting within the session
/// timeout clears it and the hold survives.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn disconnection_suspends_the_hold_and_reconnection_resumes_it() {
    let Some(url) = server() else { return };
    let upstream = SocketAddr::from(([127, 0, 0, 1], support::server_port(&url)));
    let proxy = FaultProxy::start(upstream).await;
    let lock = support::connect(&format!("zk://{}?session_timeout=4000ms", proxy.addr())).await;
    let name = unique("suspend");
    let guard = lock
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    assert!(!guard.is_suspended(), "a fresh hold is suspended");
    proxy.cut();
    eventually(scaled_ms(2000), "suspension after the cut", || {
        guard.is_suspended()
    })
    .await;
    assert!(
        !guard.is_lost(),
        "a brief disconnection fired the lost signal"
    );
    proxy.heal();
    eventually(scaled_ms(4000), "resumption after healing", || {
        !guard.is_suspended()
    })
    .await;
    assert!(
        !guard.is_lost(),
        "the hold was lost although the session survived"
    );
    guard.release().await.expect("release after reconnection");
}

/// A partition longer than the session timeout expires the session: the holder's lost signal
/// fires and a client on the other side of the partition gets the lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn partition_past_the_session_timeout_fires_lost_and_frees_the_lock() {
    let Some(url) = server() else { return };
    let upstream = SocketAddr::from(([127, 0, 0, 1], support::server_port(&url)));
    let proxy = FaultProxy::start(upstream).await;
    let holder = support::connect(&format!("zk://{}?session_timeout=2000ms", proxy.addr())).await;
    let other = support::connect(&url).await;
    let name = unique("partition");
    let guard = holder
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    proxy.cut();
    let started = Instant::now();
    let next = other
        .acquire_timeout(&name, SESSION * 3 + scaled_ms(5000))
        .await
        .expect("the other side's acquire after the session expired");
    let freed = started.elapsed();
    tokio::time::timeout(SESSION * 2 + scaled_ms(2000), guard.lost().cancelled())
        .await
        .expect("the holder's lost signal after its session expired");
    assert!(
        freed >= SESSION - 2 * TICK,
        "the lock was freed after {freed:?}, before the session timeout"
    );
    next.release().await.expect("release");
    proxy.heal();
    let error = guard
        .release()
        .await
        .expect_err("release of an expired hold succeeded");
    assert_eq!(error.kind(), lock_core::ErrorKind::NotHeld, "{error}");
    // The service opens a new session for the next acquire.
    let again = holder.acquire_timeout(&name, scaled_ms(10_000)).await;
    again
        .expect("acquire on a new session")
        .release()
        .await
        .expect("release");
}

/// A link that goes silent (connections accepted, nothing forwarded either way) hides the
/// session's expiry from the holder, which keeps reconnecting without an answer: the holder
/// declares its hold lost on its own clock, within the session timeout of the silence and no
/// later than the ensemble hands the lock to the next client. Its next acquire opens a new
/// session.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn blackholed_link_fires_lost_before_the_lock_passes_to_another_client() {
    let Some(url) = server() else { return };
    let upstream = SocketAddr::from(([127, 0, 0, 1], support::server_port(&url)));
    let proxy = FaultProxy::start(upstream).await;
    let holder_url = format!(
        "zk://{}?session_timeout={}ms",
        proxy.addr(),
        SESSION.as_millis()
    );
    let holder = support::connect(&holder_url).await;
    let other = support::connect(&url).await;
    let name = unique("blackhole");
    let guard = holder
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move {
            let guard = other
                .acquire_timeout(&name, SESSION * 3 + scaled_ms(5000))
                .await;
            (Instant::now(), guard)
        })
    };
    tokio::time::sleep(scaled_ms(300)).await;
    assert!(!waiting.is_finished(), "the other client got a held lock");
    proxy.set(Fault::Blackhole);
    let silenced = Instant::now();
    let limit = SESSION + scaled_ms(1000);
    let fired = tokio::time::timeout(limit, guard.lost().cancelled()).await;
    let lost_at = Instant::now();
    assert!(
        fired.is_ok(),
        "the holder's lost signal did not fire within {limit:?} of the link going silent"
    );
    let (granted_at, next) = tokio::time::timeout(SESSION * 3 + scaled_ms(6000), waiting)
        .await
        .expect("the other client's acquire returned")
        .expect("waiter task");
    let next = next.expect("the other client's acquire after the session expired");
    eprintln!(
        "silenced; lost after {:?}, lock passed on after {:?} (session timeout {SESSION:?})",
        lost_at - silenced,
        granted_at - silenced
    );
    assert!(
        lost_at <= granted_at + scaled_ms(100),
        "the lost signal fired {:?} after the lock passed to another client",
        lost_at - granted_at
    );
    next.release().await.expect("release");
    proxy.set(Fault::Pass);
    let again = holder.acquire_timeout(&name, scaled_ms(10_000)).await;
    again
        .expect("acquire on a new session")
        .release()
        .await
        .expect("release");
}

/// Closing a second client that shares the holder's session expires it from outside (the
/// holder is cut off meanwhile, so the two clients do not take the session from each other):
/// the waiter gets the lock well before the session timeout, and the holder's lost signal fires
/// when it reconnects and learns its session is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn session_expired_from_outside_fires_lost_and_admits_the_next_waiter() {
    let Some(url) = server() else { return };
    let upstream = SocketAddr::from(([127, 0, 0, 1], support::server_port(&url)));
    let proxy = FaultProxy::start(upstream).await;
    let long_session = Duration::from_millis(4000);
    let holder_url = format!(
        "zk://{}?session_timeout={}ms",
        proxy.addr(),
        long_session.as_millis()
    );
    let holder = support::connect(&holder_url).await;
    let waiter = support::connect(&url).await;
    let name = unique("expire");
    let guard = holder
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move {
            let guard = waiter.acquire_timeout(&name, scaled_ms(30_000)).await;
            (Instant::now(), guard)
        })
    };
    tokio::time::sleep(scaled_ms(300)).await;
    assert!(!waiting.is_finished(), "the waiter got a held lock");
    let session = holder
        .client()
        .await
        .expect("holder client")
        .session()
        .clone();
    proxy.cut();
    let closed = Instant::now();
    let twin = Client::connector()
        .with_session(session)
        .with_session_timeout(long_session)
        .connect(&upstream.to_string())
        .await
        .expect("second client on the holder's session");
    drop(twin); // closes the shared session on the server
    let (acquired, next) = tokio::time::timeout(scaled_ms(10_000), waiting)
        .await
        .expect("waiter admitted after the session was closed")
        .expect("waiter task");
    let next = next.expect("waiter acquire");
    let admitted = acquired - closed;
    assert!(
        admitted < long_session / 2,
        "the waiter got in after {admitted:?}: the session timed out instead of being closed"
    );
    proxy.heal();
    tokio::time::timeout(scaled_ms(10_000), guard.lost().cancelled())
        .await
        .expect("lost signal after the session was closed");
    next.release().await.expect("waiter release");
}

/// Lock parents are container nodes, which ZooKeeper deletes once their last lock node is gone
/// (its container manager checks once a minute by default; the test servers every second), so
/// parents do not pile up. (Clients cannot see
/// the container flag in a stat, so the reaping itself is what this checks.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn empty_lock_parents_are_reaped_as_containers() {
    let Some(url) = server() else { return };
    let lock = support::connect(&url).await;
    let name = unique("container");
    let parent = lock.lock_path(&name);
    let guard = lock
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let client = lock.client().await.expect("client");
    let exists = client.check_stat(&parent).await.expect("stat parent");
    assert!(exists.is_some(), "the lock parent is missing while held");
    guard.release().await.expect("release");
    let started = Instant::now();
    loop {
        let exists = client
            .check_stat(&parent)
            .await
            .expect("stat parent")
            .is_some();
        if !exists {
            break;
        }
        assert!(
            started.elapsed() < scaled_ms(150_000),
            "the empty lock parent {parent} was not reaped"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "empty lock parent reaped {:?} after release",
        started.elapsed()
    );
}

/// The session is the lease: a ZooKeeper hold cannot be extended, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn extend_is_unsupported_because_the_session_is_the_lease() {
    let Some(url) = server() else { return };
    let lock = support::connect(&url).await;
    let guard = lock
        .acquire_timeout(unique("extend"), scaled_ms(5000))
        .await
        .expect("acquire");
    let error = guard
        .extend(Duration::from_secs(5))
        .await
        .expect_err("extend");
    assert_eq!(error.kind(), lock_core::ErrorKind::Unsupported, "{error}");
    assert!(!guard.is_lost(), "a refused extend marked the hold lost");
    guard.release().await.expect("release");
}
