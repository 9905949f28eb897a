//! The fenced MySQL/MariaDB handoff floor on a real MariaDB: every grant writes the lock row (a
//! higher fence, the new owner), a handoff's write lands before the waiter is woken, and a
//! release with nobody waiting frees the row. Its clients taking turns back to back are tested
//! with the bare floor's (`mysql_kill_floor.rs`).

use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::Contender;
use compare_bench::peers::mysql_kill_floor::KillRelay;
use lock_sql::sqlx::{self, Connection, MySqlConnection};
use lock_testkit::require;
use lock_testkit::servers::MariaDbServer;

/// A grant this long after the release came from the interrupt, not from a park that slept
/// its second out.
const WOKEN_WITHIN: Duration = Duration::from_millis(500);

/// The row of `name`: its owner and fence.
async fn row(probe: &mut MySqlConnection, name: &str) -> (Option<Vec<u8>>, i64) {
    sqlx::query_as("SELECT owner, fence FROM peer_fenced_floor WHERE name = ?")
        .bind(name)
        .fetch_one(probe)
        .await
        .expect("read the lock row")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_grant_writes_a_higher_fence_and_its_owner() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let name = "fenced/turns";
    let clients = [
        Arc::new(KillRelay::connect_fenced(&url, name).await.expect("first")),
        Arc::new(KillRelay::connect_fenced(&url, name).await.expect("second")),
    ];
    let mut probe = MySqlConnection::connect(&url).await.expect("probe");
    assert_eq!(row(&mut probe, name).await.0, None, "free before any grant");
    let mut held = clients[0].acquire().await.expect("uncontended grant");
    let (mut owner, mut fence) = row(&mut probe, name).await;
    assert!(
        owner.is_some() && fence > 0,
        "the first grant wrote nothing"
    );
    for turn in 1..=6 {
        let waiter = Arc::clone(&clients[turn % 2]);
        let waiting =
            tokio::spawn(async move { waiter.acquire().await.map_err(|e| e.to_string()) });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "turn {turn}: granted while held");
        assert_eq!(
            row(&mut probe, name).await,
            (owner.clone(), fence),
            "turn {turn}"
        );
        held.release().await.expect("release");
        let granted = tokio::time::timeout(WOKEN_WITHIN, waiting).await;
        let granted = granted
            .unwrap_or_else(|_| panic!("turn {turn}: no grant {WOKEN_WITHIN:?} after the release"));
        held = granted.expect("waiter task").expect("grant");
        let (next_owner, next_fence) = row(&mut probe, name).await;
        assert!(
            next_owner.is_some() && next_owner != owner,
            "turn {turn}: the handoff did not write the waiter as owner"
        );
        assert!(next_fence > fence, "turn {turn}: the fence did not rise");
        (owner, fence) = (next_owner, next_fence);
    }
    held.release().await.expect("last release");
    assert_eq!(
        row(&mut probe, name).await,
        (None, fence),
        "freed, fence kept"
    );
}
