//! On MySQL and MariaDB an uncontended acquisition is one statement and its release another,
//! counted by the server itself (`Questions`) on a server no other test binary uses.

use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_testkit::require;
use lock_testkit::servers::MariaDbServer;
use sqlx::Connection;

const PAIRS: u64 = 40;

/// The server's count of client statements; the read counts itself.
async fn questions(conn: &mut sqlx::MySqlConnection) -> u64 {
    let (_, value): (String, String) = sqlx::query_as("SHOW GLOBAL STATUS LIKE 'Questions'")
        .fetch_one(conn)
        .await
        .expect("read Questions");
    value.parse().expect("Questions is a number")
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
