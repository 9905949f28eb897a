//! A waiter's entry refresh that races the release granting it. The refresh, sent before the
//! grant committed, sees the lock held and upserts the entry the grant just deleted, so the
//! entry comes back, carrying the new holder's own owner token. The holder's release must not
//! hand the lock to that entry: it would pass the lock to the token releasing it, and leave it
//! held by nobody until the lease ran out.

use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use sqlx::{PgPool, Postgres, Transaction};

use crate::blocking::{backend_pid, until_blocked, until_count};
use crate::support::line::service;
use crate::support::{SqlTarget, unique};

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// Locks the waiter entries of `name`, so that a release granting one and the refresh of that
/// entry both wait, in the order they are sent; with the locking backend's process id.
async fn lock_entries<'a>(admin: &'a PgPool, name: &str) -> (Transaction<'a, Postgres>, i32) {
    let mut locking = admin.begin().await.expect("begin");
    let locked: Vec<(i32,)> =
        sqlx::query_as("SELECT 1 FROM distlock_locks_waiters WHERE name = $1 FOR UPDATE")
            .bind(name)
            .fetch_all(&mut *locking)
            .await
            .expect("lock the entries");
    assert_eq!(locked.len(), 1, "one waiter entry");
    let pid = backend_pid(&mut locking).await;
    (locking, pid)
}

/// The holder's release grants the waiter; the waiter's entry refresh, blocked behind it, puts
/// the entry back. Once the waiter released in turn, the lock is free and no entry is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refresh_racing_its_grant_leaves_no_hold_behind_the_release() {
    let Some(target) = target() else { return };
    let name = unique("handoff/refresh");
    // The release waits for the refresh to come, up to 5 s: longer than the default timeout.
    let joint = if target.url.contains('?') { '&' } else { '?' };
    let patient = format!("{}{joint}operation_timeout=20s", target.url);
    let holding = SqlLock::builder(&patient).connect().await.expect("connect");
    let (waiting, later) = (service(&target).await, service(&target).await);
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    let held = holding
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free");
    let waiter = {
        let name = name.clone();
        tokio::spawn(async move { waiting.acquire_timeout(&name, scaled_ms(30_000)).await })
    };
    until_count(
        &admin,
        "SELECT count(*) FROM distlock_locks_waiters WHERE name = $1",
        name.as_str(),
        1,
    )
    .await;
    let (locking, locker) = lock_entries(&admin, name.as_str()).await;
    let releasing = tokio::spawn(async move { held.release().await });
    until_blocked(&admin, locker, 1, scaled_ms(2_000)).await;
    // The waiter refreshes its entry every 5 s: that try now waits behind the release.
    until_blocked(&admin, locker, 2, scaled_ms(8_000)).await;
    locking.commit().await.expect("let both go");
    releasing.await.expect("release task").expect("release");
    let granted = waiter.await.expect("waiter task").expect("granted");
    granted.release().await.expect("the waiter's release");

    let free = later.try_acquire(&name).await.expect("try");
    assert!(
        free.is_some(),
        "the lock stayed held after its holder released it"
    );
    let entries: i64 =
        sqlx::query_scalar("SELECT count(*) FROM distlock_locks_waiters WHERE name = $1")
            .bind(name.as_str())
            .fetch_one(&admin)
            .await
            .expect("count the entries");
    assert_eq!(entries, 0, "an entry outlived its acquisition");
    if let Some(guard) = free {
        guard.release().await.expect("release");
    }
}
