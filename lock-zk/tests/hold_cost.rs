//! What a held lock costs the client and the server beyond its node (a server of its own, so
//! its counts are ours alone): a hold runs no task and keeps no watch of its own, and a
//! release is one request, however long the hold lasted.

mod support;

use std::time::Duration;

use lock_core::AcquireOptions;
use lock_testkit::holds::hold_many;
use lock_testkit::scaled_ms;
use support::{received, unique, watches};
use tokio::runtime::Handle;

const HOLDS: usize = 200;

/// One test, so that nothing else in this binary sends the server requests or runs tasks
/// while they are counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_run_no_task_keep_no_watch_and_release_in_one_request_each() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let port = support::server_port(&url);
    // Confirmations every third of a long session timeout: none while the holds are counted.
    let lock = support::connect(&format!("{url}?session_timeout=30000ms")).await;
    let options = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .build()
        .expect("valid options");
    let prefix = unique("hold-cost").as_str().to_owned();
    let (tasks_before, watches_before) =
        (Handle::current().metrics().num_alive_tasks(), watches(port));
    let guards = hold_many(&lock, &prefix, HOLDS, &options).await;
    // Past anything a hold starts after its grant.
    tokio::time::sleep(scaled_ms(300)).await;
    let tasks = Handle::current().metrics().num_alive_tasks();
    assert!(
        tasks <= tasks_before + 2,
        "{HOLDS} holds run {tasks} tasks (before: {tasks_before})"
    );
    let kept = watches(port);
    assert!(
        kept <= watches_before + 2,
        "{HOLDS} holds keep {kept} watches on the server (before: {watches_before})"
    );
    let before = received(port);
    for guard in guards {
        guard.release().await.expect("release");
    }
    let sent = received(port) - before;
    assert!(
        sent <= HOLDS as u64 + 2,
        "releasing {HOLDS} holds took {sent} requests"
    );
}
