//! An acquisition that finds the lock held and places its waiter entry while the holder's
//! release is in flight. The release expects nobody in line (`release_alone.sql`, which reads
//! the lock row's mark and not the waiters table), and the entry's statement marks the lock row
//! under its row lock: whichever of the two takes the row first, the waiter is granted at once,
//! not after its fallback recheck (5 s). When the release goes first, the placing statement
//! finds the lock freed behind its snapshot and says so; when the mark goes first, the release
//! finds it and hands the lock over with `release.sql`.
//! An administrator's transaction holding the lock row lines both statements up behind it.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLockExt, LockGuard, LockName};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use sqlx::PgPool;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::blocking::{lock_one, until_blocked};
use crate::release_choice::sent_since;
use crate::support::line::service;
use crate::support::{SqlTarget, unique};

/// Well under the 5 s a waiter that heard nothing waits before it tries again, and far above
/// the milliseconds a told waiter takes.
const TOLD_WITHIN: Duration = Duration::from_millis(2_500);

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// Which statement reaches the held lock row first.
#[derive(Clone, Copy, Debug)]
enum First {
    Release,
    Arrival,
}

/// The holder's release and an arriving acquisition queue on the lock row in `first`'s order
/// behind an administrator's transaction; once it lets go, the arrival must be granted within
/// [`TOLD_WITHIN`]. The release statements sent, `[release_alone.sql, release.sql]`.
async fn race(first: First) -> Option<[u64; 2]> {
    let target = target()?;
    let name = unique("arrival/race");
    let (holder, arriving) = (service(&target).await, service(&target).await);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    let row = "SELECT 1 FROM distlock_locks WHERE name = $1 FOR UPDATE";
    let (locking, locker) = lock_one(&admin, row, name.as_str()).await;
    let before = holder.release_statements().expect("counted");

    let (releasing, arrival) = match first {
        First::Release => {
            let releasing = release(held);
            until_blocked(&admin, locker, 1, scaled_ms(2_000)).await;
            (releasing, arrive(arriving, &name))
        }
        First::Arrival => {
            let arrival = arrive(arriving, &name);
            until_blocked(&admin, locker, 1, scaled_ms(2_000)).await;
            (release(held), arrival)
        }
    };
    until_blocked(&admin, locker, 2, scaled_ms(2_000)).await;

    let let_go = Instant::now();
    locking.commit().await.expect("let the row go");
    releasing.await.expect("release task");
    let (granted, at) = arrival.await.expect("arriving task");
    let waited = at.saturating_duration_since(let_go);
    assert!(
        waited < TOLD_WITHIN,
        "{first:?} first: the arriving acquisition waited {waited:?} after the release: \
         nobody told it"
    );
    granted.release().await.expect("release");
    Some(sent_since(&holder, before))
}

fn release(held: LockGuard) -> JoinHandle<()> {
    tokio::spawn(async move { held.release().await.expect("release") })
}

fn arrive(arriving: Arc<SqlLock>, name: &LockName) -> JoinHandle<(LockGuard, Instant)> {
    let name = name.clone();
    tokio::spawn(async move {
        let guard = arriving.acquire_timeout(&name, scaled_ms(30_000)).await;
        (guard.expect("granted"), Instant::now())
    })
}

/// The release frees the row before the arrival marks it: the arrival's statement finds the
/// lock freed behind its snapshot and tries again at once; the release needed nobody's line.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_acquisition_arriving_behind_a_release_is_not_left_waiting() {
    let Some(sent) = race(First::Release).await else {
        return;
    };
    assert_eq!(sent, [1, 0], "the release found somebody in line");
}

/// The arrival marks the row before the release reaches it: the cheap release is refused by
/// the mark, and the full one hands the lock to the arrival.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_behind_an_arriving_mark_hands_the_lock_over() {
    let Some(sent) = race(First::Arrival).await else {
        return;
    };
    assert_eq!(
        sent,
        [1, 1],
        "the release did not go on to hand the lock over"
    );
}
