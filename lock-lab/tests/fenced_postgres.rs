//! Fencing tokens with a real protected store: PostgreSQL rejects a stale holder's write in the
//! write's own `WHERE` clause. This is the example docs/safety.md walks through.
//!
//! The lock comes from any backend (here lock-sql on the same server, for one server less);
//! the store keeps, beside each value, the highest fencing token that wrote it, and an update
//! only matches while its token is at least that high. A holder that was paused past its lease
//! and resumes cannot overwrite what the next holder wrote, whatever it still believes.

use std::sync::OnceLock;
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, LockGuard};
use lock_sql::sqlx::{self, PgPool};
use lock_testkit::require;
use lock_testkit::servers::{PostgresServer, external_url};

/// One PostgreSQL for this test binary (or `LOCK_TEST_POSTGRES_URL`).
fn postgres_url() -> Option<String> {
    static SERVER: OnceLock<Option<PostgresServer>> = OnceLock::new();
    if let Some(url) = external_url("POSTGRES") {
        return Some(url);
    }
    SERVER
        .get_or_init(|| require(PostgresServer::start()))
        .as_ref()
        .map(PostgresServer::url)
}

/// The protected table: documents, each with the fencing token of its last writer.
async fn create_store(pool: &PgPool, id: &str) -> sqlx::Result<()> {
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS documents \
         (id TEXT PRIMARY KEY, body TEXT NOT NULL, fence BIGINT NOT NULL)",
    )
    .execute(pool)
    .await?;
    sqlx::query("INSERT INTO documents (id, body, fence) VALUES ($1, '', 0)")
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

/// Writes `body` under the guard's fencing token. The token check is part of the statement, so
/// the store itself decides: `false` means a newer holder has written, and nothing changed.
async fn fenced_write(
    pool: &PgPool,
    id: &str,
    guard: &LockGuard,
    body: &str,
) -> sqlx::Result<bool> {
    let token = i64::try_from(guard.fencing_token()).unwrap_or(i64::MAX);
    let updated =
        sqlx::query("UPDATE documents SET body = $1, fence = $2 WHERE id = $3 AND fence <= $2")
            .bind(body)
            .bind(token)
            .bind(id)
            .execute(pool)
            .await?;
    Ok(updated.rows_affected() == 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rejects_the_write_of_a_holder_that_outlived_its_lease() {
    let Some(url) = postgres_url() else {
        return;
    };
    let pool = PgPool::connect(&url).await.expect("connect the store");
    let id = format!("report-{:x}", rand::random::<u64>());
    create_store(&pool, &id).await.expect("create the store");
    let locks = distlock::connect(&url)
        .await
        .expect("connect the lock service");
    let name = format!("reports/{id}");

    // A holder that stops renewing (as a paused process would) and outlives its lease.
    let lease = Duration::from_millis(300);
    let stalled = AcquireOptions::builder()
        .lease(lease)
        .auto_renew(false)
        .build()
        .expect("options");
    let first = locks
        .acquire_timeout_with(&name, &stalled)
        .await
        .expect("first holder");
    assert!(
        fenced_write(&pool, &id, &first, "draft by the first holder")
            .await
            .expect("write")
    );
    tokio::time::sleep(lease * 2).await;

    let second = locks
        .acquire_timeout(&name, Duration::from_secs(5))
        .await
        .expect("second holder after the lease ran out");
    assert!(second.fencing_token() > first.fencing_token());
    assert!(
        fenced_write(&pool, &id, &second, "final by the second holder")
            .await
            .expect("write")
    );

    // The first holder resumes and writes before it looks at its lost signal: the store refuses.
    let accepted = fenced_write(&pool, &id, &first, "stale overwrite")
        .await
        .expect("write");
    assert!(
        !accepted,
        "the store accepted a write with a stale fencing token"
    );
    let (body, fence): (String, i64) =
        sqlx::query_as("SELECT body, fence FROM documents WHERE id = $1")
            .bind(&id)
            .fetch_one(&pool)
            .await
            .expect("read back");
    assert_eq!(body, "final by the second holder");
    assert_eq!(u64::try_from(fence).ok(), Some(second.fencing_token()));
    second.release().await.expect("release");
}
