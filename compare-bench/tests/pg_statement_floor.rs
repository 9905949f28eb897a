//! The floor of distlock's PostgreSQL statements on a real PostgreSQL waits as distlock does: a
//! refused client places a waiter entry with its grant terms, and the holder's release grants
//! it the lock in arrival order and tells its listener alone, without a further statement.

mod floor_line;

use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::Contender;
use compare_bench::peers::pg_statement_floor;
use compare_bench::peers::statement_floor::TABLE;
use lock_sql::sqlx::{self, AssertSqlSafe, Connection, PgConnection};
use lock_testkit::require;
use lock_testkit::servers::PostgresServer;

use floor_line::Line;

const NAME: &str = "floor/contended";

/// Less than the floor's fallback look (1 s without a word): a grant this fast was heard.
const HEARD_WITHIN: Duration = Duration::from_millis(500);

/// The waiter entries of the floor's lock.
async fn entries(url: &str) -> i64 {
    let mut connection = PgConnection::connect(url).await.expect("connect");
    let count = format!("SELECT COUNT(*) FROM \"{TABLE}_waiters\" WHERE name = $1");
    sqlx::query_scalar(AssertSqlSafe(count))
        .bind(NAME)
        .fetch_one(&mut connection)
        .await
        .expect("count the entries")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_floor_clients_wait_in_line_and_are_granted_in_arrival_order() {
    let Some(server) = require(PostgresServer::start()) else {
        return;
    };
    let url = server.url();
    let client = async || {
        let client = pg_statement_floor::connect(&url, NAME).await;
        Arc::new(client.expect("client"))
    };
    let clients = [client().await, client().await, client().await];
    Line {
        clients,
        entries: || entries(&url),
        first_granted_within: HEARD_WITHIN,
        second_granted_within: HEARD_WITHIN,
    }
    .grants_in_arrival_order()
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_taking_turns_never_wait_for_the_fallback_look() {
    let Some(server) = require(PostgresServer::start()) else {
        return;
    };
    let url = server.url();
    let mut turns = Vec::new();
    for _ in 0..2 {
        let client = pg_statement_floor::connect(&url, "floor/turns").await;
        let client = client.expect("client");
        turns.push(tokio::spawn(async move {
            for pair in 0..100 {
                let held = tokio::time::timeout(HEARD_WITHIN, client.acquire()).await;
                let Ok(held) = held else {
                    return Err(format!("pair {pair} waited past 0.5 s"));
                };
                let held = held.map_err(|error| error.to_string())?;
                tokio::task::yield_now().await;
                held.release().await.map_err(|error| error.to_string())?;
            }
            Ok::<_, String>(())
        }));
    }
    for turn in turns {
        turn.await
            .expect("a client's task")
            .expect("a client's pairs");
    }
}
