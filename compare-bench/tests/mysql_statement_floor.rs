//! The floor of distlock's MySQL/MariaDB statements on a real MariaDB waits as distlock does: a
//! refused client places a waiter entry, parks its second connection, is granted in arrival
//! order as soon as the holder's release interrupts the park, and then removes its entry.

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

/// Starts `client`'s acquire in a task; its result says whether it was granted.
fn acquiring(
    client: &Arc<mysql_statement_floor::MySqlStatementFloor>,
) -> tokio::task::JoinHandle<Result<Box<dyn compare_bench::contend::Held>, String>> {
    let client = Arc::clone(client);
    tokio::spawn(async move { client.acquire().await.map_err(|error| error.to_string()) })
}

/// Waits until the floor's lock has `count` waiter entries.
async fn line_of(url: &str, count: i64) {
    for _ in 0..100 {
        if entries(url).await == count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the line never reached {count} entries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_floor_clients_wait_in_line_and_are_granted_in_arrival_order() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let client = async || {
        let client = mysql_statement_floor::connect(&url, NAME).await;
        Arc::new(client.expect("client"))
    };
    let (first, second, third) = (client().await, client().await, client().await);
    let held = first.acquire().await.expect("uncontended grant");
    let waiting = acquiring(&second);
    line_of(&url, 1).await;
    let behind = acquiring(&third);
    line_of(&url, 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    if waiting.is_finished() || behind.is_finished() {
        panic!("an acquire ended while the first client held");
    }

    held.release().await.expect("release");
    // A park left to sleep out would end about 0.9 s after the release.
    let granted = tokio::time::timeout(Duration::from_millis(500), waiting)
        .await
        .expect("the first in line was not granted within 0.5 s of the release")
        .expect("the waiting task")
        .expect("the waiting acquire");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !behind.is_finished(),
        "the second in line was granted while the first held"
    );
    assert_eq!(entries(&url).await, 1, "the granted client left its entry");
    granted.release().await.expect("second release");
    let last = tokio::time::timeout(Duration::from_secs(5), behind)
        .await
        .expect("the second in line was not granted within 5 s of the release")
        .expect("the waiting task")
        .expect("the waiting acquire");
    assert_eq!(entries(&url).await, 0, "the granted client left its entry");
    last.release().await.expect("third release");
}
