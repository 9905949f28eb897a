//! PostgreSQL serves waiters in arrival order, and a release wakes the first waiter in line
//! alone: no herd of acquire statements, however many wait.

use lock_core::{DistributedLockExt, ErrorKind};
use lock_testkit::scaled_ms;

use crate::support::line::service;
use crate::support::{SqlTarget, unique};

/// The test binary's server as the shared cases see it; `None` skips.
fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// An entry queued by another process (a row put in the waiters table directly, with the mark
/// on the lock row that every process places beside its entries, and which no wake-up
/// reaches) holds back a newcomer while the lock is free, until the entry is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_queued_entry_holds_back_a_newcomer_on_a_free_lock() {
    let Some(target) = target() else { return };
    let name = unique("fairness/barging");
    let lock = service(&target).await;
    let held = lock.try_acquire(&name).await.expect("try").expect("free");
    held.release().await.expect("release");
    let admin = sqlx::PgPool::connect(&target.url)
        .await
        .expect("admin pool");
    let waiter = rand::random::<u128>().to_be_bytes();
    sqlx::query(
        "INSERT INTO distlock_locks_waiters (name, waiter, expires_at, queued_at) \
         VALUES ($1, $2, now() + INTERVAL '1 minute', now())",
    )
    .bind(name.as_str())
    .bind(&waiter[..])
    .execute(&admin)
    .await
    .expect("queue an entry");
    sqlx::query(
        "UPDATE distlock_locks SET queued_until = now() + INTERVAL '1 minute' WHERE name = $1",
    )
    .bind(name.as_str())
    .execute(&admin)
    .await
    .expect("mark the lock row");
    let barged = lock.try_acquire(&name).await.expect("try");
    assert!(
        barged.is_none(),
        "a newcomer barged ahead of a queued entry"
    );
    sqlx::query("DELETE FROM distlock_locks_waiters WHERE name = $1")
        .bind(name.as_str())
        .execute(&admin)
        .await
        .expect("remove the entry");
    let granted = lock
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free again");
    granted.release().await.expect("release");
}

/// The first waiter gives up while the holder still holds; the release then wakes the next
/// one, which is granted at once although its own timers would sleep far longer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_leaving_the_head_of_the_line_hands_its_turn_on() {
    let Some(target) = target() else { return };
    let name = unique("fairness/leaving");
    let holder = service(&target).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let first = service(&target).await;
    let leaving = {
        let name = name.clone();
        tokio::spawn(async move { first.acquire_timeout(&name, scaled_ms(400)).await.err() })
    };
    tokio::time::sleep(scaled_ms(100)).await;
    let second = service(&target).await;
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move {
            let guard = second.acquire_timeout(&name, scaled_ms(20_000)).await;
            (tokio::time::Instant::now(), guard)
        })
    };
    let gave_up = leaving.await.expect("first waiter");
    assert_eq!(
        gave_up.map(|error| error.kind()),
        Some(ErrorKind::Timeout),
        "the first waiter was granted while the lock was held"
    );
    tokio::time::sleep(scaled_ms(100)).await;
    let released_at = tokio::time::Instant::now();
    held.release().await.expect("release");
    let (granted_at, guard) = waiting.await.expect("second waiter");
    let guard = guard.expect("granted");
    let handoff = granted_at - released_at;
    assert!(
        handoff < scaled_ms(1000),
        "granted {handoff:?} after the release"
    );
    guard.release().await.expect("release");
}
