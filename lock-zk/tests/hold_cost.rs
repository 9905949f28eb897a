//! What a held lock costs the client and the server beyond its node (a server of its own, so
//! its request count is ours alone): one watcher task serves every hold of a session, and a
//! release is one request, however long the hold lasted.

mod support;

use std::time::Duration;

use lock_core::{DistributedLockExt, LockGuard};
use lock_testkit::scaled_ms;
use lock_zk::ZkLock;
use support::{received, unique};
use tokio::runtime::Handle;

const HOLDS: usize = 200;

/// Holds `HOLDS` fresh names and waits until their nodes are watched (a hold's node is watched
/// 20 ms into the hold).
async fn hold_watched(lock: &ZkLock) -> Vec<LockGuard> {
    let acquiring = (0..HOLDS).map(|hold| {
        let name = unique(&format!("hold-cost/{hold}"));
        async move { lock.acquire_timeout(&name, scaled_ms(5000)).await }
    });
    let guards: Vec<LockGuard> = futures_util::future::join_all(acquiring)
        .await
        .into_iter()
        .map(|guard| guard.expect("acquire"))
        .collect();
    tokio::time::sleep(scaled_ms(300)).await;
    guards
}

/// One test, so that nothing else in this binary sends the server requests or runs tasks
/// while they are counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watched_holds_run_no_task_each_and_release_in_one_request_each() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let port = support::server_port(&url);
    // Confirmations every third of a long session timeout: none while the releases go.
    let lock = support::connect(&format!("{url}?session_timeout=30000ms")).await;
    let tasks_before = Handle::current().metrics().num_alive_tasks();
    let guards = hold_watched(&lock).await;
    let tasks = Handle::current().metrics().num_alive_tasks();
    assert!(
        tasks <= tasks_before + 2,
        "{HOLDS} watched holds run {tasks} tasks (before: {tasks_before})"
    );
    let before = received(port);
    for guard in guards {
        guard.release().await.expect("release");
    }
    let sent = received(port) - before;
    assert!(
        sent <= HOLDS as u64 + 2,
        "releasing {HOLDS} watched holds took {sent} requests"
    );
}
