//! What an uncontended acquire+release pair asks of the server (a server of its own, so its
//! counts are ours alone, whose container reaper stays out of the count's short window: a
//! reaper pass between a delete and the next create is another transaction, after which the
//! create cannot prove its node alone): once a hold has seen its queue empty, the next pair of
//! the same lock is a create and a delete, without listing the queue.

mod support;

use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::scaled_ms;
use support::{received, unique};

const PAIRS: u64 = 50;

/// One test, so that nothing else in this binary sends the server requests while they are
/// counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncontended_pairs_cost_a_create_and_a_delete_each() {
    let Some(url) = support::rarely_reaped_server_url(Duration::from_millis(2000)) else {
        return;
    };
    let port = support::server_port(&url);
    // Confirmations every third of a long session timeout: none while the pairs are counted.
    let lock = support::connect(&format!("{url}?session_timeout=30000ms")).await;
    let name = unique("lone-pairs");
    // The first pair makes the parent and lists the queue, which shows its node alone.
    let guard = lock.acquire_timeout(&name, scaled_ms(5000)).await;
    guard.expect("acquire").release().await.expect("release");
    let before = received(port);
    let mut tokens = Vec::new();
    for _ in 0..PAIRS {
        let guard = lock.acquire_timeout(&name, scaled_ms(5000)).await;
        let guard = guard.expect("acquire");
        tokens.push(guard.fencing_token());
        guard.release().await.expect("release");
    }
    let sent = received(port) - before;
    assert!(
        sent <= 2 * PAIRS + 2,
        "{PAIRS} uncontended pairs took {sent} requests"
    );
    assert!(
        tokens.windows(2).all(|pair| pair[0] < pair[1]),
        "fencing tokens did not grow: {tokens:?}"
    );
}
