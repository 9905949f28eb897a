//! Interop with Apache Curator's LeaderLatch at `election_path`: a Curator latch and a distlock
//! candidate are candidates of one election, and each sees the other as leader. Skipped only
//! when Java or Curator is missing and `LOCK_TEST_REQUIRE` is unset.

mod support;

use lock_core::{DistributedLock, ElectionExt};
use lock_testkit::scaled_ms;

use support::{Curator, hosts, line_within, next_line, send, start, unique};

/// The Curator program of these cases.
const PROGRAM: &str = "CuratorLatch";

/// What Curator's `getLeader` shows for the election at `path`.
fn curator_sees(curator: &Curator, hosts: &str, path: &str) -> String {
    let (mut java, mut stdout) = start(curator, &["leader", hosts, path]);
    let line = next_line(&mut stdout, scaled_ms(30_000));
    let _ = java.wait();
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_curator_leader_holds_us_off_and_we_see_it() {
    let Some((server, lock, curator)) = support::setup(PROGRAM).await else {
        return;
    };
    let hosts = hosts(&server.url());
    let name = unique("latch-leads");
    let path = lock.election_path(&name);
    let (mut java, mut stdout) = start(&curator, &["lead", &hosts, &path, "curator-1"]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "started");
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "leading");
    let shown = lock.leader(&name).await.expect("leader").expect("a leader");
    assert_eq!(
        shown.value, "curator-1",
        "the Curator latch's id as its value"
    );
    let rival = lock
        .try_campaign(&name, "ours-1")
        .await
        .expect("try_campaign");
    assert!(rival.is_none(), "we led beside a Curator leader");
    let waiting = {
        let lock = lock.clone();
        let name = name.clone();
        tokio::spawn(async move {
            lock.campaign_timeout(&name, "ours-1", scaled_ms(30_000))
                .await
        })
    };
    tokio::time::sleep(scaled_ms(500)).await;
    assert!(
        !waiting.is_finished(),
        "we led while the Curator latch leads"
    );
    send(&mut java, "close");
    assert_eq!(next_line(&mut stdout, scaled_ms(10_000)), "closed");
    let leading = tokio::time::timeout(scaled_ms(5000), waiting)
        .await
        .expect("we never led after the Curator latch closed")
        .expect("task")
        .expect("campaign");
    assert!(leading.epoch() > shown.epoch, "the epoch did not rise");
    assert_eq!(curator_sees(&curator, &hosts, &path), "leader ours-1");
    leading.resign().await.expect("resign");
    let _ = java.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn our_leader_holds_a_curator_latch_off_and_it_sees_us() {
    let Some((server, lock, curator)) = support::setup(PROGRAM).await else {
        return;
    };
    let hosts = hosts(&server.url());
    let name = unique("we-lead");
    let path = lock.election_path(&name);
    let mut leading = lock.campaign(&name, "ours-1").await.expect("campaign");
    leading.proclaim("ours-2").await.expect("proclaim");
    assert_eq!(curator_sees(&curator, &hosts, &path), "leader ours-2");
    let (mut java, mut stdout) = start(&curator, &["lead", &hosts, &path, "curator-2"]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "started");
    let early = line_within(&mut stdout, scaled_ms(1000));
    assert_eq!(early, None, "the Curator latch led while we lead");
    let epoch = leading.epoch();
    leading.resign().await.expect("resign");
    assert_eq!(
        line_within(&mut stdout, scaled_ms(10_000)).as_deref(),
        Some("leading"),
        "the Curator latch never led after we resigned"
    );
    let shown = lock.leader(&name).await.expect("leader").expect("a leader");
    assert_eq!(shown.value, "curator-2");
    assert!(shown.epoch > epoch, "the epoch did not rise");
    send(&mut java, "close");
    assert_eq!(next_line(&mut stdout, scaled_ms(10_000)), "closed");
    let _ = java.wait();
    assert_eq!(lock.read_leader(&name).await.expect("leader"), None);
}
