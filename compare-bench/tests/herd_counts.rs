//! The herd scenario's per-release figures on a real ZooKeeper: wake-ups and packets are
//! counted over the whole run, the waiters still in line at the deadline draining after it
//! included, so they are divided by every release of the run, not by the window's grants.

use compare_bench::scenarios::herd;
use lock_testkit::require;
use lock_testkit::servers::ZkServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_predecessor_watch_wakes_at_most_one_waiter_per_release() {
    let Some(server) = require(ZkServer::start()) else {
        return;
    };
    // 24 waiters drain after a 0.3 s window: about a fifth of the window's own releases.
    let record = herd::measure(&server.url(), 24, 0.3, false)
        .await
        .expect("a herd point");
    let wakeups = record
        .number("wakeups_per_release")
        .expect("wake-ups per release");
    assert!(
        wakeups <= 1.0,
        "{wakeups} wake-ups per release: each release deletes one node, which one waiter watches"
    );
    assert!(
        record.number("packets_per_release").unwrap_or(f64::NAN) > 0.0,
        "no ZooKeeper packets counted"
    );
}
