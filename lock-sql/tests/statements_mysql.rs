//! On MySQL and MariaDB an uncontended acquisition is one statement and its release another,
//! counted by the server itself (`Questions`, `Com_insert`) on a server no other test binary
//! uses.

use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_testkit::require;
use lock_testkit::servers::MariaDbServer;
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
