//! The server counters the waiting and many-locks scenarios read count a request by the time
//! its answer came, so a window of a second or two holds the requests made in it; the server
//! CPU the latency scenario reads counts the processes that serve the requests.

use std::time::Duration;

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

/// The server's CPU counts the work of its backends: PostgreSQL runs each connection's
/// statements in a process it forked, which the server's own time never includes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_cpu_counts_its_backends() {
    // Enough for several clock ticks (10 ms) of the backend's time on a fast machine.
    const STATEMENTS: usize = 5000;
    let Some(mut server) = require(PostgresServer::start()) else {
        return;
    };
    let pid = server.process().pid().expect("a spawned server");
    let mut conn = PgConnection::connect(&server.url()).await.expect("connect");
    let backend: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut conn)
        .await
        .expect("the backend's pid");
    let read = |pid: u32| compare_bench::cpu::tree_cpu(pid).expect("a running process");
    let (server_before, backend_before) = (read(pid), read(backend as u32));
    for _ in 0..STATEMENTS {
        sqlx::query("SELECT 1")
            .execute(&mut conn)
            .await
            .expect("a statement");
    }
    let backend_used = read(backend as u32) - backend_before;
    let server_used = read(pid) - server_before;
    assert!(
        backend_used >= Duration::from_millis(10),
        "{STATEMENTS} statements took the backend only {backend_used:?}"
    );
    assert!(
        server_used >= backend_used,
        "the server's tree grew by {server_used:?}, less than its live backend's {backend_used:?}"
    );
    conn.close().await.expect("close");
}
