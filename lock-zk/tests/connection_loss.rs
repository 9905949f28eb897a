//! Connection loss around acquisitions, through a proxy that cuts the client off: protected
//! create never leaves a second node, a disconnected acquire fails with `Unavailable` in time,
//! and a dropped acquire leaves no node behind.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind};
use lock_testkit::faults::FaultProxy;
use lock_testkit::scaled_ms;
use support::{eventually_async, lock_nodes, unique};
use tokio::time::Instant;

fn server() -> Option<(String, SocketAddr)> {
    let url = support::server_url(Duration::from_millis(200))?;
    let upstream = SocketAddr::from(([127, 0, 0, 1], support::server_port(&url)));
    Some((url, upstream))
}

/// Connection cuts at random points of 30 acquisitions: each grant leaves exactly one node of
/// ours (a create whose answer was lost is found by its prefix, not repeated).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cuts_during_acquire_never_leave_a_second_node() {
    let Some((url, upstream)) = server() else {
        return;
    };
    let proxy = FaultProxy::start(upstream).await;
    let lock = support::connect(&format!("zk://{}?session_timeout=4000ms", proxy.addr())).await;
    let admin = support::connect(&url).await;
    let name = unique("protected");
    for round in 0..30 {
        let acquiring = {
            let (lock, name) = (&lock, &name);
            async move { lock.acquire_timeout(name, scaled_ms(10_000)).await }
        };
        let (guard, ()) = tokio::join!(acquiring, cut_briefly(&proxy, round));
        let guard = guard.unwrap_or_else(|error| panic!("round {round}: {error}"));
        let nodes = lock_nodes(&admin, &name).await;
        assert_eq!(
            nodes.len(),
            1,
            "round {round}: nodes after one grant: {nodes:?}"
        );
        guard.release().await.expect("release");
        assert!(
            lock_nodes(&admin, &name).await.is_empty(),
            "round {round}: node left after release"
        );
    }
}

/// Connection cuts at random points of 30 first acquisitions of fresh names, whose lock
/// parent does not exist yet (as after the server reaps an empty one): a cut while the parent
/// is being made is ridden out like any other, and the grant leaves exactly one node.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cuts_while_making_the_parent_are_ridden_out() {
    let Some((url, upstream)) = server() else {
        return;
    };
    let proxy = FaultProxy::start(upstream).await;
    let lock = support::connect(&format!("zk://{}?session_timeout=4000ms", proxy.addr())).await;
    let admin = support::connect(&url).await;
    for round in 0..30 {
        let name = unique("parentless");
        let acquiring = lock.acquire_timeout(&name, scaled_ms(10_000));
        let (guard, ()) = tokio::join!(acquiring, cut_briefly(&proxy, round));
        let guard = guard.unwrap_or_else(|error| panic!("round {round}: {error}"));
        let nodes = lock_nodes(&admin, &name).await;
        assert_eq!(
            nodes.len(),
            1,
            "round {round}: nodes after one grant: {nodes:?}"
        );
        guard.release().await.expect("release");
    }
}

/// Cuts the link for 50 ms at a point of the first few milliseconds of an acquisition that
/// `round` spreads over them.
async fn cut_briefly(proxy: &FaultProxy, round: u64) {
    let micros = (round * 7919) % 4000;
    tokio::time::sleep(Duration::from_micros(micros)).await;
    proxy.cut();
    tokio::time::sleep(Duration::from_millis(50)).await;
    proxy.heal();
}

/// With the connection down, an acquire fails with `Unavailable` within the operation timeout
/// instead of hanging; once the connection is back the same service acquires.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acquire_without_a_connection_is_unavailable_in_time() {
    let Some((_, upstream)) = server() else {
        return;
    };
    let proxy = FaultProxy::start(upstream).await;
    let timeout = Duration::from_millis(1000);
    let url = format!(
        "zk://{}?session_timeout=4000ms&operation_timeout={}ms",
        proxy.addr(),
        timeout.as_millis()
    );
    let lock = support::connect(&url).await;
    let name = unique("unavailable");
    proxy.cut();
    let started = Instant::now();
    let error = lock
        .acquire_timeout(&name, scaled_ms(30_000))
        .await
        .expect_err("acquire without a connection succeeded");
    let elapsed = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(
        elapsed <= timeout + scaled_ms(1000),
        "Unavailable after {elapsed:?}"
    );
    proxy.heal();
    let guard = lock.acquire_timeout(&name, scaled_ms(10_000)).await;
    guard
        .expect("acquire after reconnecting")
        .release()
        .await
        .expect("release");
}

/// Dropping a waiting acquire deletes its node in the background: the queue shrinks back to
/// the holder alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dropped_waiting_acquire_deletes_its_node() {
    let Some((url, _)) = server() else { return };
    let (holder, waiter, admin) = (
        support::connect(&url).await,
        support::connect(&url).await,
        support::connect(&url).await,
    );
    let name = unique("dropped");
    let guard = holder
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let waiting = waiter.acquire_timeout(&name, scaled_ms(30_000));
    let outcome = tokio::time::timeout(scaled_ms(500), waiting).await;
    assert!(outcome.is_err(), "the waiter got a held lock");
    eventually_async(
        scaled_ms(5000),
        "the dropped waiter's node to go",
        || async { lock_nodes(&admin, &name).await.len() == 1 },
    )
    .await;
    guard.release().await.expect("release");
    assert!(lock_nodes(&admin, &name).await.is_empty(), "a node is left");
}

/// Dropping a connect that keeps failing abandons it: no attempts continue in the background.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dropped_connect_stops_connecting() {
    let Some((_, upstream)) = server() else {
        return;
    };
    let proxy = FaultProxy::start(upstream).await;
    proxy.cut();
    let url = format!("zk://{}?connect_timeout=30s", proxy.addr());
    let connecting = lock_zk::ZkLock::builder(&url).connect();
    let outcome = tokio::time::timeout(Duration::from_millis(500), connecting).await;
    assert!(outcome.is_err(), "connected through a cut proxy");
    assert!(proxy.accepted() > 0, "the connect never tried");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after_drop = proxy.accepted();
    tokio::time::sleep(scaled_ms(1000)).await;
    assert_eq!(
        proxy.accepted(),
        after_drop,
        "connection attempts went on after the drop"
    );
}
