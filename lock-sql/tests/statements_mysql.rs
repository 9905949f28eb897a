//! On MySQL and MariaDB an uncontended acquisition is one statement and its release another,
//! and a handoff writes the lock row once, counted by the server itself (`Questions`,
//! `Com_insert`, `Com_update`) on a server each test starts for itself.

use std::sync::Arc;
use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_testkit::servers::MariaDbServer;
use lock_testkit::{require, scaled_ms};
use sqlx::Connection;

const PAIRS: u64 = 40;

/// The server's count of client statements; the read counts itself.
async fn questions(conn: &mut sqlx::MySqlConnection) -> u64 {
    counter(conn, "Questions").await
}

/// The server's status counter `name`, such as `Com_insert` (statements run that insert,
/// upserts included).
async fn counter(conn: &mut sqlx::MySqlConnection, name: &str) -> u64 {
    let show = format!("SHOW GLOBAL STATUS LIKE '{name}'");
    let (_, value): (String, String) = sqlx::query_as(sqlx::AssertSqlSafe(show))
        .fetch_one(conn)
        .await
        .expect("read a status counter");
    value.parse().expect("a status counter is a number")
}

/// Half the pairs insert a fresh row, half take over a released one: the two paths of the
/// acquire statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncontended_acquire_and_release_are_one_statement_each() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let lock = SqlLock::builder(&url).connect().await.expect("connect");
    // The pool's connection opened, the schema checked, the statements prepared.
    let warm = lock.try_acquire("warm").await.expect("try").expect("free");
    warm.release().await.expect("release");
    let mut status = sqlx::MySqlConnection::connect(&url)
        .await
        .expect("status connection");
    let before = questions(&mut status).await;
    for pair in 0..PAIRS {
        let name = if pair % 2 == 0 {
            format!("fresh-{pair}")
        } else {
            "reused".to_owned()
        };
        let held = lock.try_acquire(name.as_str()).await.expect("try");
        held.expect("free").release().await.expect("release");
    }
    let sent = questions(&mut status).await - before - 1;
    assert_eq!(
        sent,
        2 * PAIRS,
        "{PAIRS} uncontended acquire/release pairs sent {sent} statements"
    );
}

/// A name the service has acquired before is taken over by an `UPDATE`: its pairs run no
/// insert. A row deleted behind the service's back is inserted again by the next acquisition,
/// one statement later, with a larger fencing token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_row_is_updated_and_a_deleted_one_is_inserted_again() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let lock = SqlLock::builder(&url).connect().await.expect("connect");
    let first = lock.try_acquire("known").await.expect("try").expect("free");
    first.release().await.expect("release");
    let mut status = sqlx::MySqlConnection::connect(&url)
        .await
        .expect("status connection");
    let inserts = counter(&mut status, "Com_insert").await;
    let mut fence = 0;
    for _ in 0..PAIRS {
        let held = lock.try_acquire("known").await.expect("try").expect("free");
        fence = held.fencing_token();
        held.release().await.expect("release");
    }
    let inserted = counter(&mut status, "Com_insert").await - inserts;
    assert_eq!(
        inserted, 0,
        "{PAIRS} pairs on a known row ran {inserted} inserts"
    );

    sqlx::query("DELETE FROM distlock_locks WHERE name = 'known'")
        .execute(&mut status)
        .await
        .expect("delete the row");
    let before = questions(&mut status).await;
    let again = lock.try_acquire("known").await.expect("try").expect("free");
    assert!(
        again.fencing_token() > fence,
        "a reinserted row's token {} is not above {fence}",
        again.fencing_token()
    );
    again.release().await.expect("release");
    let sent = questions(&mut status).await - before - 1;
    assert_eq!(sent, 3, "the pair on a deleted row sent {sent} statements");
    // The release left the token in the row: it holds nothing.
    assert!(
        !lock.sever("known").await.expect("sever"),
        "a released row was severed"
    );
    assert!(
        lock.try_acquire("known").await.expect("try").is_some(),
        "a released row is held"
    );
}

/// Waits until an acquisition parks a connection on the server.
async fn until_parked(status: &mut sqlx::MySqlConnection) {
    let deadline = tokio::time::Instant::now() + scaled_ms(10_000);
    let sql = "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
               WHERE INFO LIKE '%distlock park%' AND ID <> CONNECTION_ID()";
    loop {
        let parked: i64 = sqlx::query_scalar(sql)
            .fetch_one(&mut *status)
            .await
            .expect("read the process list");
        if parked == 1 {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "nobody parked");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One handoff of `name` from a hold of `holding` to an acquisition of `waiting`, after
/// `holding` found the line (its own try was refused) and `waiting` parked: how many
/// single-table and multi-table updates the server ran from the release until the waiter held.
async fn handoff(
    holding: &SqlLock,
    waiting: &Arc<SqlLock>,
    status: &mut sqlx::MySqlConnection,
    name: &'static str,
) -> (u64, u64) {
    let held = holding.try_acquire(name).await.expect("try").expect("free");
    let refused = holding.try_acquire(name).await.expect("try");
    assert!(refused.is_none(), "a held lock was granted");
    let task = {
        let waiting = Arc::clone(waiting);
        tokio::spawn(async move { waiting.acquire_timeout(name, scaled_ms(10_000)).await })
    };
    until_parked(status).await;
    let updates = counter(status, "Com_update").await;
    let multi = counter(status, "Com_update_multi").await;
    held.release().await.expect("release");
    let granted = task.await.expect("waiter task").expect("granted");
    let updates = counter(status, "Com_update").await - updates;
    let multi = counter(status, "Com_update_multi").await - multi;
    granted.release().await.expect("release");
    (updates, multi)
}

/// Plants an entry of `name` that expired (a process that died waiting) and returns how many
/// expired entries of `name` the waiters table holds.
async fn plant_dead_entry(status: &mut sqlx::MySqlConnection, name: &str) -> i64 {
    sqlx::query(
        "INSERT INTO distlock_locks_waiters (name, waiter, expires_at, queued_at) \
         VALUES (?, RANDOM_BYTES(16), UTC_TIMESTAMP(6) - INTERVAL 1 SECOND, \
                 UTC_TIMESTAMP(6) - INTERVAL 20 SECOND)",
    )
    .bind(name.as_bytes())
    .execute(&mut *status)
    .await
    .expect("plant an expired entry");
    dead_entries(status, name).await
}

async fn dead_entries(status: &mut sqlx::MySqlConnection, name: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM distlock_locks_waiters \
         WHERE name = ? AND expires_at <= UTC_TIMESTAMP(6)",
    )
    .bind(name.as_bytes())
    .fetch_one(status)
    .await
    .expect("count expired entries")
}

/// A release by a service whose acquisitions found a line at the name grants the first
/// waiter in the same statement (`release_grant.sql`, a multi-table `UPDATE`), and the
/// waiter, rung, takes the grant up by reading the row (`handed.sql`): from the release to
/// the waiter holding, the lock row is written once, and by no single-table `UPDATE`. The
/// granted waiter removes its entry by its key, purging the expired entries of the name only
/// the first time in every 64: the first handoff takes a dead entry with it, the second
/// leaves one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_writes_the_lock_row_once() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    let url = server.url();
    let holding = SqlLock::builder(&url).connect().await.expect("connect");
    let waiting = Arc::new(SqlLock::builder(&url).connect().await.expect("connect"));
    let mut status = sqlx::MySqlConnection::connect(&url)
        .await
        .expect("status connection");
    // The tables exist once a service acquired.
    let warm = holding
        .try_acquire("warm")
        .await
        .expect("try")
        .expect("free");
    warm.release().await.expect("release");
    for (turn, dead_after) in [(1, 0), (2, 1)] {
        assert_eq!(plant_dead_entry(&mut status, "line").await, 1);
        let (updates, multi) = handoff(&holding, &waiting, &mut status, "line").await;
        assert_eq!(
            (updates, multi),
            (0, 1),
            "handoff {turn} ran {updates} single-table and {multi} multi-table updates"
        );
        let dead = dead_entries(&mut status, "line").await;
        assert_eq!(
            dead, dead_after,
            "after handoff {turn}: {dead} expired entries"
        );
    }
}
