//! A waiter whose parked connection could not be named in its entry, because the server rolled
//! that statement back for contention (a deadlock among the line's statements, which InnoDB
//! reports under load), takes a grant made meanwhile within milliseconds: no release can ring
//! a connection its entry does not name, so the waiter reads the line at the line's pace
//! instead of sleeping out a whole park.

use std::time::Duration;

use lock_core::DistributedLockExt;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection};
use tokio::time::Instant;

use super::parking::{service, table, waiter};

/// Makes the server roll back, as for a deadlock (error 1213), every statement that names the
/// connection sending it in an entry of `table`'s line: the statement a waiter sends on its
/// parked connection before it parks (wait_sleeper.sql).
async fn deadlock_every_naming(admin: &mut MySqlConnection, table: &str) {
    let trigger = format!(
        "CREATE TRIGGER `{table}_deadlock` BEFORE UPDATE ON `{table}_waiters` FOR EACH ROW \
         IF NEW.sleeper = CONNECTION_ID() THEN \
           SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, \
             MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction'; \
         END IF"
    );
    sqlx::raw_sql(AssertSqlSafe(trigger))
        .execute(admin)
        .await
        .expect("create the trigger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_whose_naming_is_rolled_back_still_takes_its_grant_at_once() {
    let Some(url) = crate::url() else {
        return;
    };
    let mut admin = MySqlConnection::connect(&url).await.expect("admin");
    let table = table("rolled_back");
    let (holder, waiting) = (service(&url, &table).await, service(&url, &table).await);
    deadlock_every_naming(&mut admin, &table).await;
    let held = holder.try_acquire("rolled-back").await.expect("try");
    let held = held.expect("free");
    let task = waiter(&waiting, "rolled-back");
    // The waiter placed its entry and its naming was rolled back by now.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let released = Instant::now();
    held.release().await.expect("release");
    let (guard, granted) = task.await.expect("waiter");
    let handoff = granted.saturating_duration_since(released);
    guard.release().await.expect("release");
    assert!(
        handoff < Duration::from_millis(500),
        "the waiter took its grant {handoff:?} after the release"
    );
}
