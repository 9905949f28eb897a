//! A waiter that leaves the line of a free lock wakes whoever is left, even an acquisition
//! whose entry was placed while the leave was under way (invisible to the leave's statement).

use lock_core::DistributedLockExt;
use lock_testkit::scaled_ms;
use sqlx::PgPool;
use tokio::time::Instant;

use crate::blocking::{backend_pid, blocked_by, until_blocked, until_count};
use crate::support::line::service;
use crate::support::{SqlTarget, unique};

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// The leave of a cancelled waiter is held up (an open transaction holds the lock row, which
/// it frees without a notification, as a release racing the leave would); a newcomer then
/// finds the leaving entry ahead and places its own (its mark on the lock row is the leaving
/// entry's, unless that one is about to end: then the newcomer's statement queues behind the
/// leave to move it). When the leave goes on, its statement cannot see the newcomer's entry,
/// yet the newcomer is woken and granted at once, not left for the notification fallback
/// (5 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leave_racing_a_newcomer_still_wakes_it() {
    let Some(target) = target() else { return };
    let name = unique("leaving/racing");
    let (holding, leaving, arriving) = (
        service(&target).await,
        service(&target).await,
        service(&target).await,
    );
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    let held = holding
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free");
    let waiting = {
        let (leaving, name) = (leaving.clone(), name.clone());
        tokio::spawn(async move { leaving.acquire_timeout(&name, scaled_ms(30_000)).await })
    };
    let entries = "SELECT count(*) FROM distlock_locks_waiters WHERE name = $1";
    until_count(&admin, entries, name.as_str(), 1).await;

    let mut freeing = admin.begin().await.expect("begin");
    sqlx::query("UPDATE distlock_locks SET owner = NULL, lease_end = now() WHERE name = $1")
        .bind(name.as_str())
        .execute(&mut *freeing)
        .await
        .expect("free the lock row");
    let locker = backend_pid(&mut freeing).await;
    waiting.abort();
    until_blocked(&admin, locker, 1, scaled_ms(5000)).await;

    let arrival = {
        let (arriving, name) = (arriving.clone(), name.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let granted = arriving.acquire_timeout(&name, scaled_ms(4000)).await;
            (granted, started.elapsed())
        })
    };
    placed_or_blocked(&admin, (entries, name.as_str()), locker).await;
    freeing.commit().await.expect("commit");

    let (granted, took) = arrival.await.expect("arrival task");
    let guard = granted.expect("the newcomer is granted");
    assert!(
        took < scaled_ms(1000),
        "the newcomer was granted after {took:?}: the leave woke nobody"
    );
    guard.release().await.expect("release");
    drop(held);
}

/// Waits until the newcomer's entry is in (two entries counted by `entries`) or its statement
/// waits behind the leave (two statements blocked by `locker`), or panics.
async fn placed_or_blocked(admin: &PgPool, (entries, name): (&'static str, &str), locker: i32) {
    let deadline = Instant::now() + scaled_ms(5000);
    while Instant::now() < deadline {
        let placed: i64 = sqlx::query_scalar(entries)
            .bind(name)
            .fetch_one(admin)
            .await
            .expect("count");
        if placed == 2 || blocked_by(admin, locker).await == 2 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("the newcomer neither placed its entry nor waited behind the leave");
}
