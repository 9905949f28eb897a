//! Renewal traffic against a real ZooKeeper (a server of its own, so its request count is
//! ours alone): the holds of one session share their confirmations (reads of their nodes)
//! instead of each sending its own request every third of the session timeout.

mod support;

use std::time::Duration;

use lock_core::AcquireOptions;
use lock_testkit::holds::hold_many;
use lock_testkit::scaled_ms;
use support::{received, unique};

const HOLDS: usize = 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_of_one_session_share_their_confirmations() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let port = support::server_port(&url);
    let session_timeout = Duration::from_secs(4);
    let lock = support::connect(&format!("{url}?session_timeout=4000ms")).await;
    // Taken together, so their renewals fall due together and can share their reads.
    let options = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .build()
        .expect("valid options");
    let prefix = unique("renewals").as_str().to_owned();
    let guards = hold_many(&lock, &prefix, HOLDS, &options).await;
    // Then three confirmation periods (a third of the session timeout each): one request per
    // hold per period would be 180 requests.
    let before = received(port);
    tokio::time::sleep(session_timeout).await;
    let sent = received(port) - before;
    eprintln!("{sent} requests for {HOLDS} holds over three confirmation periods");
    assert!(
        guards
            .iter()
            .all(|guard| !guard.is_lost() && !guard.is_at_risk()),
        "a hold was lost or at risk"
    );
    assert!(
        sent < (HOLDS as u64),
        "{sent} requests for {HOLDS} holds over three confirmation periods"
    );
    for guard in guards {
        guard.release().await.expect("release");
    }
}
