//! Waiting for the server to reach a state a case sets up: a count to reach a value, or
//! statements to queue behind a transaction's row locks.

use std::time::Duration;

use lock_testkit::scaled_ms;
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use tokio::time::Instant;

/// Waits until `query` (a count) answers `want`, or panics after a few seconds.
pub(crate) async fn until_count(admin: &PgPool, query: &'static str, name: &str, want: i64) {
    let deadline = Instant::now() + scaled_ms(5000);
    loop {
        let count: i64 = sqlx::query_scalar(query)
            .bind(name)
            .fetch_one(admin)
            .await
            .expect("count");
        if count == want {
            return;
        }
        assert!(Instant::now() < deadline, "{query} stayed at {count}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The server process id of `conn`, whose transaction a case holds open.
pub(crate) async fn backend_pid(conn: &mut PgConnection) -> i32 {
    sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(conn)
        .await
        .expect("the backend's process id")
}

/// Waits until `want` statements wait, directly or behind another, for the transaction of
/// the backend `locker`, or panics. Other tests' statements on the same server do not count,
/// and neither does the text of a statement (the server keeps only its first kilobyte).
pub(crate) async fn until_blocked(admin: &PgPool, locker: i32, want: i64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let blocked = blocked_by(admin, locker).await;
        if blocked == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{blocked} statements blocked, not {want}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// How many statements wait, directly or behind another, for the transaction of the backend
/// `locker` (see [`until_blocked`]).
pub(crate) async fn blocked_by(admin: &PgPool, locker: i32) -> i64 {
    sqlx::query_scalar(
        "WITH RECURSIVE behind(pid) AS ( \
             SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) \
             UNION \
             SELECT a.pid FROM pg_stat_activity AS a \
             JOIN behind AS b ON b.pid = ANY(pg_blocking_pids(a.pid)) \
         ) SELECT count(*) FROM behind",
    )
    .bind(locker)
    .fetch_one(admin)
    .await
    .expect("count the blocked statements")
}

/// Opens a transaction that locks the one row `query` selects for `name` (`FOR UPDATE`), so
/// that the statements a case sends next wait for it, in the order they are sent; with the
/// locking backend's process id.
pub(crate) async fn lock_one<'a>(
    admin: &'a PgPool,
    query: &'static str,
    name: &str,
) -> (Transaction<'a, Postgres>, i32) {
    let mut locking = admin.begin().await.expect("begin");
    let locked: Vec<(i32,)> = sqlx::query_as(query)
        .bind(name)
        .fetch_all(&mut *locking)
        .await
        .expect("lock the row");
    assert_eq!(locked.len(), 1, "{query} locked {} rows", locked.len());
    let pid = backend_pid(&mut locking).await;
    (locking, pid)
}
