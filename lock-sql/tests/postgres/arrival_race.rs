//! An acquisition that finds the lock held and places its waiter entry while the holder's
//! release is in flight, after the release's snapshot: the release cannot see the entry, and
//! expects nobody in line (`release_alone.sql`). It must still get the waiter the lock at once,
//! not after the waiter's fallback recheck (5 s): its notification names the lock, which wakes
//! every acquisition of the name.
//! An administrator's transaction holding the lock row holds the release up until the
//! acquisition has placed its entry.

use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::scaled_ms;
use sqlx::PgPool;
use tokio::time::Instant;

use crate::blocking::{lock_one, until_blocked, until_count};
use crate::release_choice::sent_since;
use crate::support::line::service;
use crate::support::{SqlTarget, unique};

/// Well under the 5 s a waiter that heard nothing waits before it tries again, and far above
/// the milliseconds a told waiter takes.
const TOLD_WITHIN: Duration = Duration::from_millis(2_500);

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// The release waits for the row; the arriving acquisition's statement comes meanwhile, sees
/// the lock held and places its entry, which the release's snapshot cannot show: the release
/// expects nobody and finds nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_acquisition_arriving_behind_a_release_is_not_left_waiting() {
    let Some(target) = target() else { return };
    let name = unique("arrival/behind-release");
    let (holder, arriving) = (service(&target).await, service(&target).await);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    let row = "SELECT 1 FROM distlock_locks WHERE name = $1 FOR UPDATE";
    let (locking, locker) = lock_one(&admin, row, name.as_str()).await;
    let before = holder.release_statements().expect("counted");

    let releasing = tokio::spawn(async move { held.release().await.expect("release") });
    until_blocked(&admin, locker, 1, scaled_ms(2_000)).await;
    let arrival = {
        let name = name.clone();
        tokio::spawn(async move {
            let guard = arriving.acquire_timeout(&name, scaled_ms(30_000)).await;
            (guard.expect("granted"), Instant::now())
        })
    };
    let entries = "SELECT count(*) FROM distlock_locks_waiters WHERE name = $1";
    until_count(&admin, entries, name.as_str(), 1).await;

    let let_go = Instant::now();
    locking.commit().await.expect("let the row go");
    releasing.await.expect("release task");
    let (granted, at) = arrival.await.expect("arriving task");
    let waited = at.saturating_duration_since(let_go);
    assert!(
        waited < TOLD_WITHIN,
        "the arriving acquisition waited {waited:?} after the release: nobody told it"
    );
    granted.release().await.expect("release");
    let sent = sent_since(&holder, before);
    assert_eq!(sent, [1, 0], "the release found somebody in line");
}
