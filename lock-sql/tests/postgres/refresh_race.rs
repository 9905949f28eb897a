//! A waiter's entry refresh that races the release granting it. The refresh, sent before the
//! grant committed, sees the lock held and upserts the entry the grant just deleted, so the
//! entry comes back, carrying the new holder's own owner token. The holder's release must not
//! hand the lock to that entry: it would pass the lock to the token releasing it, and leave it
//! held by nobody until the lease ran out. Nor may the entry, once that hold is lost, stand in
//! line or be handed the lock.

use std::sync::Arc;

use lock_core::{DistributedLock, DistributedLockExt, LockGuard, LockName};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::time::Instant;

use crate::blocking::{lock_one, until_blocked, until_count};
use crate::support::line::service;
use crate::support::{SqlTarget, unique};

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// Locks the waiter entries of `name`, so that a release granting one and the refresh of that
/// entry both wait, in the order they are sent; with the locking backend's process id.
async fn lock_entries<'a>(admin: &'a PgPool, name: &str) -> (Transaction<'a, Postgres>, i32) {
    let query = "SELECT 1 FROM distlock_locks_waiters WHERE name = $1 FOR UPDATE";
    lock_one(admin, query, name).await
}

/// The scene both cases start from: the holder's release granted the waiter, and the waiter's
/// entry refresh, blocked behind that release, put the entry back with the new hold's token.
struct Raced {
    name: LockName,
    granted: LockGuard,
    later: Arc<SqlLock>,
    admin: PgPool,
}

async fn race_refresh_with_grant(target: &SqlTarget) -> Raced {
    let name = unique("handoff/refresh");
    // The release waits for the refresh to come, up to 5 s: longer than the default timeout.
    let joint = if target.url.contains('?') { '&' } else { '?' };
    let patient = format!("{}{joint}operation_timeout=20s", target.url);
    let holding = SqlLock::builder(&patient).connect().await.expect("connect");
    let (waiting, later) = (service(target).await, service(target).await);
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
    until_count(&admin, ENTRIES, name.as_str(), 1).await;
    let (locking, locker) = lock_entries(&admin, name.as_str()).await;
    let releasing = tokio::spawn(async move { held.release().await });
    until_blocked(&admin, locker, 1, scaled_ms(2_000)).await;
    // The waiter refreshes its entry every 5 s: that try now waits behind the release.
    until_blocked(&admin, locker, 2, scaled_ms(8_000)).await;
    locking.commit().await.expect("let both go");
    releasing.await.expect("release task").expect("release");
    let granted = waiter.await.expect("waiter task").expect("granted");
    Raced {
        name,
        granted,
        later,
        admin,
    }
}

const ENTRIES: &str = "SELECT count(*) FROM distlock_locks_waiters WHERE name = $1";

async fn entries(admin: &PgPool, name: &str) -> i64 {
    sqlx::query_scalar(ENTRIES)
        .bind(name)
        .fetch_one(admin)
        .await
        .expect("count the entries")
}

/// Releases `taken`, the hold that replaced the lost one: that release must not grant the lock
/// to the lost hold's entry, so the next try takes it.
async fn no_release_grants_the_lost_entry(raced: Raced, taken: LockGuard) {
    taken.release().await.expect("release");
    let again = raced.later.try_acquire(&raced.name).await.expect("try");
    assert!(
        again.is_some(),
        "a release granted the lock to a lost holder's entry"
    );
    drop(raced.granted);
    if let Some(guard) = again {
        guard.release().await.expect("release");
    }
}

/// Once the waiter released in turn, the lock is free and no entry is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refresh_racing_its_grant_leaves_no_hold_behind_the_release() {
    let Some(target) = target() else { return };
    let raced = race_refresh_with_grant(&target).await;
    raced.granted.release().await.expect("the waiter's release");

    let free = raced.later.try_acquire(&raced.name).await.expect("try");
    assert!(
        free.is_some(),
        "the lock stayed held after its holder released it"
    );
    let left = entries(&raced.admin, raced.name.as_str()).await;
    assert_eq!(left, 0, "an entry outlived its acquisition");
    if let Some(guard) = free {
        guard.release().await.expect("release");
    }
}

/// The new holder never releases: its lease ends (as when its process stops). The entry that
/// came back with its token is nobody waiting: the lock is free to the next try at once, and
/// the entry goes when the lock is taken, so no later release grants the lock to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_holders_entry_neither_blocks_nor_takes_the_lock() {
    let Some(target) = target() else { return };
    let raced = race_refresh_with_grant(&target).await;
    end_lease(&raced).await;

    let taken = raced.later.try_acquire(&raced.name).await.expect("try");
    let taken = taken.expect("a lost holder's own entry kept its lock from a free try");
    let left = entries(&raced.admin, raced.name.as_str()).await;
    assert_eq!(left, 0, "a lost holder's entry outlived the takeover");
    no_release_grants_the_lost_entry(raced, taken).await;
}

/// The new holder's hold is forced off by its fencing token: the entry that came back with its
/// token goes with it, and the next try takes the lock at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_forced_holders_entry_goes_with_its_hold() {
    let Some(target) = target() else { return };
    let raced = race_refresh_with_grant(&target).await;
    let token = raced.granted.fencing_token();
    let forced = raced.later.force_release(&raced.name, token).await;
    assert!(forced.expect("force"), "the hold was live");

    let left = entries(&raced.admin, raced.name.as_str()).await;
    assert_eq!(left, 0, "a forced holder's entry outlived its hold");
    let taken = raced.later.try_acquire(&raced.name).await.expect("try");
    assert!(
        taken.is_some(),
        "a forced holder's entry kept its lock from a free try"
    );
    drop(raced.granted);
    if let Some(guard) = taken {
        guard.release().await.expect("release");
    }
}

/// Ends the lease of the raced hold, as when its process stops without releasing.
async fn end_lease(raced: &Raced) {
    sqlx::query("UPDATE distlock_locks SET lease_end = now() WHERE name = $1")
        .bind(raced.name.as_str())
        .execute(&raced.admin)
        .await
        .expect("end the hold's lease");
}

/// A waiter queued behind the new hold takes the lock over once that hold's lease ends: the
/// entry that came back with the lost hold's token goes with the takeover (its retry, which
/// already has an entry of its own), so no later release grants the lock to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_taking_over_a_lost_hold_removes_its_entry() {
    let Some(target) = target() else { return };
    let raced = race_refresh_with_grant(&target).await;
    let waiting = {
        let (later, name) = (Arc::clone(&raced.later), raced.name.clone());
        tokio::spawn(async move { later.acquire_timeout(&name, scaled_ms(30_000)).await })
    };
    until_count(&raced.admin, ENTRIES, raced.name.as_str(), 2).await;
    end_lease(&raced).await;

    // Nobody announces an ended lease: the waiter finds it on its own entry's refresh.
    let taken = waiting.await.expect("waiter task").expect("granted");
    let left = entries(&raced.admin, raced.name.as_str()).await;
    assert_eq!(
        left, 0,
        "a lost holder's entry outlived a waiter's takeover"
    );
    no_release_grants_the_lost_entry(raced, taken).await;
}

/// Two acquisitions wait behind the lost hold's entry when its lease ends. The first leaves
/// (cancelled): the lock is free, so its leave wakes the next waiter, which must be the second
/// acquisition, not the entry that is nobody waiting. Woken, it is granted at once instead of
/// on its entry's refresh (5 s after its try, which came just before the leave).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leave_wakes_the_waiter_behind_a_lost_holders_entry() {
    let Some(target) = target() else { return };
    let raced = race_refresh_with_grant(&target).await;
    let arriving = service(&target).await;
    let leaving = {
        let (later, name) = (Arc::clone(&raced.later), raced.name.clone());
        tokio::spawn(async move { later.acquire_timeout(&name, scaled_ms(30_000)).await })
    };
    until_count(&raced.admin, ENTRIES, raced.name.as_str(), 2).await;
    let arrival = {
        let name = raced.name.clone();
        tokio::spawn(async move { arriving.acquire_timeout(&name, scaled_ms(30_000)).await })
    };
    until_count(&raced.admin, ENTRIES, raced.name.as_str(), 3).await;
    end_lease(&raced).await;

    let left_at = Instant::now();
    leaving.abort();
    let guard = arrival.await.expect("arrival task").expect("granted");
    let took = left_at.elapsed();
    assert!(
        took < scaled_ms(2000),
        "the second waiter was granted {took:?} after the first left: the leave woke nobody"
    );
    guard.release().await.expect("release");
    drop(raced.granted);
}
