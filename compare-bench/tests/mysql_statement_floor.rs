//! The floor of distlock's MySQL/MariaDB statements on a real MariaDB waits as distlock does: a
//! refused client places a waiter entry, polls, is granted once the holder releases, and then
//! removes its entry.

use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::Contender;
use compare_bench::peers::mysql_statement_floor;
use compare_bench::peers::statement_floor::TABLE;
use lock_sql::sqlx::{self, AssertSqlSafe, Connection, MySqlConnection};
use lock_testkit::require;
use lock_testkit::servers::MariaDbServer;

const NAME: &str = "floor/contended";

/// The waiter entries of the floor's lock.
async fn entries(url: &str) -> i64 {
    let mut connection = MySqlConnection::connect(url).await.expect("connect");
    let count = format!("SELECT COUNT(*) FROM {TABLE}_waiters WHERE name = ?");
    sqlx::query_scalar(AssertSqlSafe(count))
        .bind(NAME.as_bytes())
        .fetch_one(&mut connection)
        .await
        .expect("count the entries")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_floor_client_waits_in_line_and_is_granted_after_the_release() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let first = mysql_statement_floor::connect(&url, NAME)
        .await
        .expect("first client");
    let second = Arc::new(
        mysql_statement_floor::connect(&url, NAME)
            .await
            .expect("second client"),
    );
    let held = first.acquire().await.expect("uncontended grant");
    let waiting = tokio::spawn({
        let second = Arc::clone(&second);
        async move { second.acquire().await.map_err(|error| error.to_string()) }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    if waiting.is_finished() {
        let early = waiting.await.expect("the waiting task").map(|_| "granted");
        panic!("the second acquire ended while the first client held: {early:?}");
    }
    assert_eq!(entries(&url).await, 1, "the waiting client placed no entry");

    held.release().await.expect("release");
    // Polls come at most 500 ms apart on the default backoff.
    let granted = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("not granted within 5 s of the release")
        .expect("the waiting task")
        .expect("the waiting acquire");
    assert_eq!(entries(&url).await, 0, "the granted client left its entry");
    granted.release().await.expect("second release");
}
