//! Lock holders in processes of their own (`lock-holder`), one backend after another: a holder
//! killed with SIGKILL is replaced once its lease (or session) ends, not before, and contending
//! processes never overlap and never share a fencing token.

use std::path::Path;
use std::time::Duration;

use distlock::DistributedLockExt;
use lock_lab::holder::{Holder, finish_contender, start_contender};
use lock_testkit::servers::{PostgresServer, RedisServer, ZkServer};
use lock_testkit::{require, scaled, scaled_ms};
use tokio::time::Instant;

fn holder() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_lock-holder"))
}

fn unique(case: &str) -> String {
    format!("processes/{case}/{:016x}", rand::random::<u64>())
}

/// `processes` contenders take `name` `rounds` times each: no overlaps, tokens rising in each
/// process and never handed out twice.
fn assert_contenders_never_overlap(url: &str, processes: usize, rounds: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("inside");
    let name = unique("contend");
    let children: Vec<_> = (0..processes)
        .map(|_| start_contender(holder(), url, &name, rounds, &marker))
        .collect();
    let mut all = Vec::new();
    for child in children {
        let report = finish_contender(child);
        assert_eq!(
            report.overlaps, 0,
            "two processes held the lock at once: {report:?}"
        );
        assert_eq!(report.tokens.len(), rounds);
        assert!(
            report.tokens.windows(2).all(|pair| pair[0] < pair[1]),
            "tokens fell: {report:?}"
        );
        all.extend(report.tokens);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(
        all.len(),
        processes * rounds,
        "a fencing token was handed out twice"
    );
}

/// A holder with `lease` is killed; another client's waiting acquire is granted within
/// `[earliest, latest]` of the kill, with a larger token.
async fn assert_killed_holder_replaced(
    url: &str,
    lease: Option<Duration>,
    earliest: Duration,
    latest: Duration,
) {
    let name = unique("crash");
    let mut crashed = Holder::acquire(holder(), url, &name, lease, scaled_ms(20_000));
    let waiter = distlock::connect(url).await.expect("connect");
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move {
            let guard = waiter.acquire_timeout(&name, scaled_ms(30_000)).await;
            (Instant::now(), guard)
        })
    };
    tokio::time::sleep(scaled_ms(300)).await;
    assert!(
        !waiting.is_finished(),
        "the waiter got the lock while the holder lived"
    );
    let killed = Instant::now();
    crashed.kill();
    let (granted, guard) = waiting.await.expect("waiter task");
    let guard = guard.expect("acquire after the holder died");
    let waited = granted - killed;
    eprintln!("{url}: holder killed; replaced after {waited:?}");
    assert!(
        waited >= earliest,
        "replaced after {waited:?}, before {earliest:?}"
    );
    assert!(
        waited <= latest,
        "replaced after {waited:?}, later than {latest:?}"
    );
    assert!(
        guard.fencing_token() > crashed.fencing_token(),
        "fencing token went back"
    );
    guard.release().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_holder_is_replaced_after_its_lease_and_contenders_never_overlap() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let lease = scaled_ms(1000);
    // Waiting from before the kill: the wake-up comes at the key's expiry.
    assert_killed_holder_replaced(
        &server.url(),
        Some(lease),
        lease - scaled_ms(400),
        lease + scaled_ms(500),
    )
    .await;
    assert_contenders_never_overlap(&server.url(), 3, 40);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_killed_holder_is_replaced_after_its_lease() {
    let Some(server) = require(PostgresServer::start()) else {
        return;
    };
    let lease = Duration::from_millis(2000);
    assert_killed_holder_replaced(
        &server.url(),
        Some(lease),
        lease - scaled_ms(600),
        lease + scaled_ms(1000),
    )
    .await;
}

#[test]
fn sqlite_processes_on_one_file_never_overlap() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    assert_contenders_never_overlap(&url, 2, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn zookeeper_killed_holder_is_replaced_after_the_session_timeout() {
    const TICK: Duration = Duration::from_millis(200);
    const SESSION: Duration = Duration::from_millis(2000);
    let Some(server) = require(ZkServer::start_with_tick(TICK)) else {
        return;
    };
    let url = format!("{}?session_timeout={}ms", server.url(), SESSION.as_millis());
    let latest = SESSION + 2 * TICK + scaled(Duration::from_millis(1500));
    assert_killed_holder_replaced(&url, None, SESSION - 2 * TICK, latest).await;
}
