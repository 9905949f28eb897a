//! A PostgreSQL release picks its statement by the line it expects: `release_alone.sql` (the
//! cheaper one) when this service last found the name's lock row unmarked, `release.sql` (which
//! hands the lock over) when it found a waiter or the row marked for waiters, and the second
//! after the first when the first finds the row marked after all. Either way the row ends as
//! `release.sql` leaves it.

use std::time::Duration;

use lock_core::{DistributedLockExt, LockGuard, LockName};
use lock_sql::SqlLock;
use sqlx::PgPool;

use crate::support::line::{Line, service};
use crate::support::{SqlTarget, unique};

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// The statements `lock`'s releases sent since `before`: `[release_alone.sql, release.sql]`.
pub(crate) fn sent_since(lock: &SqlLock, before: [u64; 2]) -> [u64; 2] {
    let now = lock.release_statements().expect("counted on PostgreSQL");
    [now[0] - before[0], now[1] - before[1]]
}

async fn take(lock: &SqlLock, name: &LockName) -> LockGuard {
    lock.try_acquire(name).await.expect("try").expect("free")
}

/// Releases `guard` while one waiter (a service of its own) is in line, and checks that the
/// waiter is granted; the statements the release sent.
async fn release_to_a_waiter(target: &SqlTarget, holder: &SqlLock, guard: LockGuard) -> [u64; 2] {
    let name = guard.name().clone();
    let mut line = Line::queue_up(target, holder, &name, 1, Duration::ZERO).await;
    let before = holder.release_statements().expect("counted");
    guard.release().await.expect("release");
    let sent = sent_since(holder, before);
    assert_eq!(line.granted().await, vec![0], "the waiter was not granted");
    sent
}

/// Releases `guard` with nobody waiting; the statements it sent.
async fn release_alone(holder: &SqlLock, guard: LockGuard) -> [u64; 2] {
    let before = holder.release_statements().expect("counted");
    guard.release().await.expect("release");
    sent_since(holder, before)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_sends_the_statement_its_line_needs() {
    let Some(target) = target() else { return };
    let name = unique("release/choice");
    let holder = service(&target).await;
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    for round in 0..3 {
        let guard = take(&holder, &name).await;
        let fence = guard.fencing_token();
        assert_eq!(release_alone(&holder, guard).await, [1, 0], "round {round}");
        let (owner, kept): (Option<Vec<u8>>, i64) =
            sqlx::query_as("SELECT owner, fence FROM distlock_locks WHERE name = $1")
                .bind(name.as_str())
                .fetch_one(&admin)
                .await
                .expect("row");
        assert_eq!(
            (owner, kept),
            (None, fence as i64),
            "the row after a release"
        );
    }
    let guard = take(&holder, &name).await;
    let sent = release_to_a_waiter(&target, &holder, guard).await;
    assert_eq!(sent, [1, 1], "the first release that finds a waiter");
    let guard = take(&holder, &name).await;
    let sent = release_to_a_waiter(&target, &holder, guard).await;
    assert_eq!(sent, [0, 1], "a release after one that found a waiter");
    let guard = take(&holder, &name).await;
    let sent = release_alone(&holder, guard).await;
    assert_eq!(
        sent,
        [0, 1],
        "the first release that finds nobody after one that did"
    );
    let guard = take(&holder, &name).await;
    let sent = release_alone(&holder, guard).await;
    assert_eq!(sent, [0, 1], "a release while the waiter's mark lasts");
    sqlx::query("UPDATE distlock_locks SET queued_until = now() WHERE name = $1")
        .bind(name.as_str())
        .execute(&admin)
        .await
        .expect("end the mark");
    // The acquire statement finds the mark ended, and the release is cheap again.
    let guard = take(&holder, &name).await;
    assert_eq!(release_alone(&holder, guard).await, [1, 0], "alone again");
}
