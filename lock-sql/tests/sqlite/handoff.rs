//! SQLite releases grant the lock to the first waiter in line, on the terms its entry
//! carries, in the release statement itself; waiters, which read their place in line, take
//! their grant up as their turn.

use std::sync::Arc;

use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use sqlx::{AssertSqlSafe, Connection, SqliteConnection};

/// The database clock in milliseconds, as lock-sql's SQLite statements read it.
const NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// A table of its own on the binary's file, a service on it, and a connection of the test's.
async fn scene(prefix: &str) -> (String, Arc<SqlLock>, SqliteConnection) {
    let table = format!("{prefix}_{:08x}", rand::random::<u32>());
    let lock = SqlLock::builder(&crate::url())
        .table(&table)
        .connect()
        .await;
    let lock = Arc::new(lock.expect("connect"));
    lock.ensure_schema().await.expect("schema");
    let conn = SqliteConnection::connect(&crate::url())
        .await
        .expect("connect");
    (table, lock, conn)
}

async fn exec(conn: &mut SqliteConnection, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.replace("{now}", NOW_MS)))
        .execute(conn)
        .await
        .expect("statement");
}

/// Places an entry for `name` by hand: id and owner token bytes `id`, queued `queued_at`,
/// labelled `label`, with terms unless `label` is `None`.
async fn place(
    conn: &mut SqliteConnection,
    table: &str,
    name: &str,
    id: u8,
    queued_at: i64,
    label: Option<&str>,
) {
    let sql = format!(
        "INSERT INTO \"{table}_waiters\" (name, waiter, expires_at, queued_at, grant_owner, \
                                         grant_lease_ms, grant_label) \
         VALUES (?1, ?2, {{now}} + 60000, ?3, ?4, ?5, ?6)"
    );
    let terms = label.map(|_| vec![id; 16]);
    sqlx::query(AssertSqlSafe(sql.replace("{now}", NOW_MS)))
        .bind(name)
        .bind(vec![id; 16])
        .bind(queued_at)
        .bind(terms)
        .bind(label.map(|_| 45_000_i64))
        .bind(label)
        .execute(conn)
        .await
        .expect("place an entry");
}

/// `table`'s row `name`: owner token, label, fence, milliseconds of lease left.
async fn row(
    conn: &mut SqliteConnection,
    table: &str,
    name: &str,
) -> (Option<Vec<u8>>, Option<String>, i64, i64) {
    let sql = format!(
        "SELECT owner, owner_label, fence, lease_end - {NOW_MS} FROM \"{table}\" WHERE name = ?1"
    );
    sqlx::query_as(AssertSqlSafe(sql))
        .bind(name)
        .fetch_one(conn)
        .await
        .expect("read the row")
}

/// The release statement grants the first live entry with terms, on those terms and with the
/// next fence, passing over an expired entry and one of the releasing owner; an entry without
/// terms first in line gets nothing, and the lock is freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_grants_the_first_waiter_on_its_terms() {
    let (table, lock, mut conn) = scene("grant").await;
    let held = lock.try_acquire("line").await.expect("try").expect("free");
    let fence = held.fencing_token();
    let expired = format!(
        "INSERT INTO \"{table}_waiters\" (name, waiter, expires_at, queued_at, grant_owner, \
                                         grant_lease_ms, grant_label) \
         VALUES ('line', zeroblob(16), {{now}} - 1, 1, zeroblob(16), 45000, 'expired')"
    );
    exec(&mut conn, &expired).await;
    place(&mut conn, &table, "line", 0xF1, 2, Some("first-waiter")).await;
    place(&mut conn, &table, "line", 0xF2, 3, Some("second-waiter")).await;
    held.release().await.expect("release");
    let (owner, label, granted_fence, left_ms) = row(&mut conn, &table, "line").await;
    assert_eq!(
        label.as_deref(),
        Some("first-waiter"),
        "the release did not grant the first waiter"
    );
    assert_eq!(owner, Some(vec![0xF1; 16]));
    assert!(
        granted_fence > i64::try_from(fence).expect("a fence"),
        "the fence did not rise"
    );
    assert!(
        (40_000..=45_000).contains(&left_ms),
        "a 45 s grant has {left_ms} ms left"
    );

    // The releasing owner's own entry, still first, is passed over; then an entry without
    // terms comes first: the lock is freed.
    let release = include_str!("../../sql/sqlite/release.sql")
        .replace("{table}", &table)
        .replace("{waiters}", &format!("{table}_waiters"))
        .replace("{now}", NOW_MS);
    let done = sqlx::query(AssertSqlSafe(release.clone()))
        .bind("line")
        .bind(vec![0xF1_u8; 16])
        .execute(&mut conn)
        .await
        .expect("release.sql");
    assert_eq!(done.rows_affected(), 1);
    let (owner, label, _, _) = row(&mut conn, &table, "line").await;
    assert_eq!(
        (owner, label.as_deref()),
        (Some(vec![0xF2; 16]), Some("second-waiter"))
    );
    let gone = format!("DELETE FROM \"{table}_waiters\" WHERE grant_label <> 'second-waiter'");
    exec(&mut conn, &gone).await;
    place(&mut conn, &table, "line", 0x0D, 0, None).await;
    let done = sqlx::query(AssertSqlSafe(release))
        .bind("line")
        .bind(vec![0xF2_u8; 16])
        .execute(&mut conn)
        .await
        .expect("release.sql");
    assert_eq!(done.rows_affected(), 1);
    let (owner, _, _, _) = row(&mut conn, &table, "line").await;
    assert_eq!(owner, None, "an entry without terms was granted");
}

/// Waiters of two other services on the same file, each releasing as soon as it is granted:
/// every grant a release makes is taken up as its waiter's turn, in order, within seconds; a
/// grant left unnoticed would stand until its 30 s lease ran out.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_take_their_grants_up() {
    let (table, holding, _conn) = scene("turns").await;
    let builder = || SqlLock::builder(&crate::url()).table(&table).connect();
    let services = [
        Arc::new(builder().await.expect("connect")),
        Arc::new(builder().await.expect("connect")),
    ];
    let held = holding
        .try_acquire("turns")
        .await
        .expect("try")
        .expect("free");
    let took = crate::support::turns::take_turns(&holding, held, &services, 12).await;
    assert!(took < scaled_ms(15_000), "12 handoffs took {took:?}");
}
