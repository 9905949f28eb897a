//! The server counters the waiting and many-locks scenarios read count a request by the time
//! its answer came, so a window of a second or two holds the requests made in it.

use compare_bench::counters::{PG_COUNTING_SETTINGS, pg_statements};
use lock_sql::sqlx::{self, Connection, PgConnection};
use lock_testkit::require;
use lock_testkit::servers::PostgresServer;

/// Statements sent on a connection that then stays open and idle are counted at once: a
/// counter that publishes late (as `pg_stat_database` does, up to 10 s after a backend goes
/// idle) would put them in a later window, as the waiting scenario's drain once did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_statements_are_counted_while_their_connection_idles() {
    let Some(server) = require(PostgresServer::start_with_settings(&PG_COUNTING_SETTINGS)) else {
        return;
    };
    let url = server.url();
    let before = pg_statements(&url).await.expect("the counter");
    let mut idle = PgConnection::connect(&url).await.expect("connect");
    for _ in 0..50 {
        sqlx::query("SELECT 1")
            .execute(&mut idle)
            .await
            .expect("a statement");
    }
    let after = pg_statements(&url).await.expect("the counter");
    assert_eq!(
        after - before,
        50,
        "the idle connection's 50 statements were not all counted at once"
    );
    idle.close().await.expect("close");
}
