//! The least fenced PostgreSQL lock on a real PostgreSQL: each grant is one statement that hands
//! out a fence above every earlier grant's, a grant while held fails, and the release frees it.

use compare_bench::contend::Contender;
use compare_bench::peers::pg_fenced_floor::PgFencedFloor;
use lock_testkit::require;
use lock_testkit::servers::PostgresServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_grant_hands_out_a_higher_fence() {
    let Some(server) = require(PostgresServer::start()) else {
        return;
    };
    let url = server.url();
    let lock = PgFencedFloor::connect(&url, "fenced").await.expect("first");
    let other = PgFencedFloor::connect(&url, "fenced")
        .await
        .expect("second");
    let mut last = 0;
    for turn in 0..5 {
        let fence = lock.grant("holder").await.expect("grant");
        assert!(fence > last, "turn {turn}: fence {fence} after {last}");
        last = fence;
        assert!(
            other.grant("rival").await.is_err(),
            "turn {turn}: granted twice"
        );
        let held = other.acquire().await;
        assert!(held.is_err(), "turn {turn}: acquired while held");
        release(&url, "holder").await;
    }
    let held = other.acquire().await.expect("grant after the releases");
    held.release().await.expect("release");
}

/// Frees the lock `owner` holds, as its release does.
async fn release(url: &str, owner: &str) {
    use lock_sql::sqlx::{self, Connection, PgConnection};
    let mut connection = PgConnection::connect(url).await.expect("connect");
    let removed = sqlx::query("DELETE FROM peer_fenced_holds WHERE name = 'fenced' AND owner = $1")
        .bind(owner)
        .execute(&mut connection)
        .await
        .expect("release");
    assert_eq!(removed.rows_affected(), 1, "nothing to release");
}
