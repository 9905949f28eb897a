//! A PostgreSQL release grants the lock to the first waiter in line in its own statement, on
//! the terms the waiter's entry carries: the waiter holds it when the notification arrives,
//! without another statement. A grant whose notification never arrives is found by the
//! waiter's next try, and a grant to a waiter that is going away is passed on.

use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt};
use lock_testkit::scaled_ms;
use sqlx::PgPool;
use tokio::time::Instant;

use crate::blocking::until_count;
use crate::support::line::{Line, service};
use crate::support::{SqlTarget, unique};

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// The name's waiter entries that carry grant terms.
const ENTRIES: &str =
    "SELECT count(*) FROM distlock_locks_waiters WHERE name = $1 AND grant_owner IS NOT NULL";

/// Waits until `name` has `want` entries with grant terms, or panics after a few seconds.
async fn until_entries(admin: &PgPool, name: &str, want: i64) {
    until_count(admin, ENTRIES, name, want).await;
}

/// Eight waiters on eight services: once the line formed, every grant is a release's, and no
/// waiter sends another acquire statement (a release that only woke the first waiter cost
/// one statement per handoff).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_grants_the_first_waiter_without_its_statement() {
    const WAITERS: usize = 8;
    let Some(target) = target() else { return };
    let name = unique("handoff/line");
    let holder = service(&target).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let hold = Duration::from_millis(20);
    let mut line = Line::queue_up(&target, &holder, &name, WAITERS, hold).await;
    let queued = line.statements();
    held.release().await.expect("release");
    let order = line.granted().await;
    assert_eq!(
        order,
        (0..WAITERS).collect::<Vec<_>>(),
        "granted out of order"
    );
    let sent = line.statements() - queued;
    assert_eq!(sent, 0, "{WAITERS} handoffs took {sent} acquire statements");
}

/// A release grants the lock to a waiter whose notification never comes (the grant is made
/// here as release.sql makes it, without `pg_notify`). The waiter's next try, when the
/// holder's short lease would have ended, finds the lock its own and holds it with the
/// grant's fence, long before that grant's 30 s lease would run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_grant_whose_notification_is_lost_is_found_by_the_next_try() {
    let Some(target) = target() else { return };
    let name = unique("handoff/unheard");
    let (holding, waiting) = (service(&target).await, service(&target).await);
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    let short = AcquireOptions::builder()
        .lease(scaled_ms(1000))
        .wait(Duration::ZERO)
        .build()
        .expect("options");
    let held = holding
        .acquire_with_options(&name, &short)
        .await
        .expect("try")
        .expect("free");
    let waiter = {
        let name = name.clone();
        tokio::spawn(async move {
            let guard = waiting.acquire_timeout(&name, scaled_ms(20_000)).await;
            (guard, Instant::now())
        })
    };
    until_entries(&admin, name.as_str(), 1).await;
    let fence: i64 = sqlx::query_scalar(
        "WITH head AS ( \
             SELECT waiter, grant_owner, grant_lease_us, grant_label \
             FROM distlock_locks_waiters WHERE name = $1), \
         served AS (DELETE FROM distlock_locks_waiters \
             WHERE name = $1 AND waiter IN (SELECT waiter FROM head)) \
         UPDATE distlock_locks SET owner = head.grant_owner, fence = fence + 1, \
             lease_end = clock_timestamp() + head.grant_lease_us * INTERVAL '1 microsecond', \
             owner_label = head.grant_label, granted_at = clock_timestamp() \
         FROM head WHERE name = $1 RETURNING fence",
    )
    .bind(name.as_str())
    .fetch_one(&admin)
    .await
    .expect("grant without a notification");
    let granted_at = Instant::now();
    let (guard, found_at) = waiter.await.expect("waiter");
    let guard = guard.expect("granted");
    let found = found_at - granted_at;
    assert!(
        found < scaled_ms(3000),
        "the grant was found {found:?} later"
    );
    assert_eq!(guard.fencing_token(), u64::try_from(fence).expect("fence"));
    guard.release().await.expect("release");
    drop(held);
}

/// The holder releases while the first waiter's acquisition is not being polled, so the
/// release grants it the lock; the acquisition is then dropped before it hears of it. Its
/// cleanup releases that grant, and the next waiter is granted at once, not when the grant's
/// 30 s lease runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_grant_to_a_cancelled_waiter_is_passed_on() {
    let Some(target) = target() else { return };
    let name = unique("handoff/cancelled");
    let (holding, first, second) = (
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
    let mut cancelled = Box::pin(first.acquire_timeout(&name, scaled_ms(30_000)));
    tokio::select! {
        granted = &mut cancelled => panic!("granted while held: {granted:?}"),
        () = until_entries(&admin, name.as_str(), 1) => {}
    }
    let next = {
        let name = name.clone();
        tokio::spawn(async move {
            let guard = second.acquire_timeout(&name, scaled_ms(10_000)).await;
            (guard, Instant::now())
        })
    };
    until_entries(&admin, name.as_str(), 2).await;
    held.release().await.expect("release");
    // The release granted the first waiter and removed its entry.
    until_entries(&admin, name.as_str(), 1).await;
    let dropped_at = Instant::now();
    drop(cancelled);
    let (guard, granted_at) = next.await.expect("second waiter");
    let guard = guard.expect("granted");
    let handoff = granted_at - dropped_at;
    assert!(
        handoff < scaled_ms(2000),
        "granted {handoff:?} after the cancelled waiter went"
    );
    guard.release().await.expect("release");
}
