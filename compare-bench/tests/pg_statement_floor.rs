//! The floor of distlock's PostgreSQL statements on a real PostgreSQL waits as distlock does: a
//! refused client places a waiter entry with its grant terms, and the holder's release grants
//! it the lock in arrival order and tells its listener alone, without a further statement.

use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::{Contender, Held};
use compare_bench::peers::pg_statement_floor::{self, PgStatementFloor};
use compare_bench::peers::statement_floor::TABLE;
use lock_sql::sqlx::{self, AssertSqlSafe, Connection, PgConnection};
use lock_testkit::require;
use lock_testkit::servers::PostgresServer;

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

/// Starts `client`'s acquire in a task; its result says whether it was granted.
fn acquiring(
    client: &Arc<PgStatementFloor>,
) -> tokio::task::JoinHandle<Result<Box<dyn Held>, String>> {
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

/// The acquire of `task`, which must end within [`HEARD_WITHIN`].
async fn granted_soon(
    task: tokio::task::JoinHandle<Result<Box<dyn Held>, String>>,
    who: &str,
) -> Box<dyn Held> {
    tokio::time::timeout(HEARD_WITHIN, task)
        .await
        .unwrap_or_else(|_| panic!("{who} was not granted within 0.5 s of the release"))
        .expect("the waiting task")
        .expect("the waiting acquire")
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
    let granted = granted_soon(waiting, "the first in line").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !behind.is_finished(),
        "the second in line was granted while the first held"
    );
    assert_eq!(entries(&url).await, 1, "the grant left the entry");
    granted.release().await.expect("second release");
    let last = granted_soon(behind, "the second in line").await;
    assert_eq!(entries(&url).await, 0, "the grant left the entry");
    last.release().await.expect("third release");
    let again = first
        .acquire()
        .await
        .expect("a grant once the line is empty");
    again
        .release()
        .await
        .expect("a release with nobody in line");
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
