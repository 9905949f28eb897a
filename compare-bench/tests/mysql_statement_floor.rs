//! The floor of distlock's MySQL/MariaDB statements on a real MariaDB waits as distlock does: a
//! refused client places a waiter entry, parks its second connection, is granted in arrival
//! order as soon as the holder's release interrupts the park, and then removes its entry.

mod floor_line;

use std::sync::Arc;
use std::time::Duration;

use compare_bench::peers::mysql_statement_floor;
use compare_bench::peers::statement_floor::TABLE;
use lock_sql::sqlx::{self, AssertSqlSafe, Connection, MySqlConnection};
use lock_testkit::require;
use lock_testkit::servers::MariaDbServer;

use floor_line::Line;

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
async fn refused_floor_clients_wait_in_line_and_are_granted_in_arrival_order() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let client = async || {
        let client = mysql_statement_floor::connect(&url, NAME).await;
        Arc::new(client.expect("client"))
    };
    let clients = [client().await, client().await, client().await];
    Line {
        clients,
        entries: || entries(&url),
        // A park left to sleep out would end about 0.9 s after the release.
        first_granted_within: Duration::from_millis(500),
        second_granted_within: Duration::from_secs(5),
    }
    .grants_in_arrival_order()
    .await;
}
