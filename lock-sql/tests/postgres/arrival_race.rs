//! An acquisition that finds the lock held and places its waiter entry while the holder's
//! release is in flight, after the release's snapshot: the release cannot see the entry, and
//! expects nobody in line (`release_alone.sql`). It must still get the waiter the lock at once,
//! not after the waiter's fallback recheck (5 s): its notification names the lock, which wakes
//! every acquisition of the name.
//! An administrator's transaction holding the lock row holds the release up until the
//! acquisition has placed its entry.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLockExt, LockGuard, LockName};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::blocking::{lock_one, until_blocked, until_count};
use crate::support::line::service;
use crate::support::{SqlTarget, unique};

/// Well under the 5 s a waiter that heard nothing waits before it tries again, and far above
/// the milliseconds a told waiter takes.
const TOLD_WITHIN: Duration = Duration::from_millis(2_500);

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// Locks the lock row of `name`; with the locking backend's process id.
async fn lock_row<'a>(admin: &'a PgPool, name: &str) -> (Transaction<'a, Postgres>, i32) {
    let query = "SELECT 1 FROM distlock_locks WHERE name = $1 FOR UPDATE";
    lock_one(admin, query, name).await
}

/// The release statements `lock` sent since `before`: `[release_alone.sql, release.sql]`.
fn sent_since(lock: &SqlLock, before: [u64; 2]) -> [u64; 2] {
    let now = lock.release_statements().expect("counted on PostgreSQL");
    [now[0] - before[0], now[1] - before[1]]
}

/// A case's services: the holder and the one whose acquisition arrives, and an
/// administrator's pool.
struct Scene {
    name: LockName,
    holder: Arc<SqlLock>,
    arriving: Arc<SqlLock>,
    admin: PgPool,
}

/// The scene, with the holder's guard of `name`.
async fn scene(target: &SqlTarget, label: &str) -> (Scene, LockGuard) {
    let name = unique(label);
    let (holder, arriving) = (service(target).await, service(target).await);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    let scene = Scene {
        name,
        holder,
        arriving,
        admin,
    };
    (scene, held)
}

/// Starts the arriving acquisition; it reports when it was granted.
fn arrive(scene: &Scene) -> JoinHandle<(LockGuard, Instant)> {
    let (lock, name) = (Arc::clone(&scene.arriving), scene.name.clone());
    tokio::spawn(async move {
        let guard = lock.acquire_timeout(&name, scaled_ms(30_000)).await;
        (guard.expect("granted"), Instant::now())
    })
}

/// Starts the release of `held`.
fn release(held: LockGuard) -> JoinHandle<()> {
    tokio::spawn(async move { held.release().await.expect("release") })
}

/// Lets the row go and checks that the arriving acquisition was granted within
/// [`TOLD_WITHIN`]; the release statements the holder sent meanwhile.
async fn finish(
    scene: &Scene,
    locking: Transaction<'_, Postgres>,
    (releasing, arriving): (JoinHandle<()>, JoinHandle<(LockGuard, Instant)>),
    before: [u64; 2],
) -> [u64; 2] {
    let let_go = Instant::now();
    locking.commit().await.expect("let the row go");
    releasing.await.expect("release task");
    let (granted, at) = arriving.await.expect("arriving task");
    let waited = at.saturating_duration_since(let_go);
    assert!(
        waited < TOLD_WITHIN,
        "the arriving acquisition waited {waited:?} after the release: nobody told it"
    );
    granted.release().await.expect("release");
    sent_since(&scene.holder, before)
}

/// The release waits for the row; the arriving acquisition's statement comes meanwhile, sees
/// the lock held and places its entry, which the release's snapshot cannot show: the release
/// expects nobody and finds nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_acquisition_arriving_behind_a_release_is_not_left_waiting() {
    let Some(target) = target() else { return };
    let (scene, held) = scene(&target, "arrival/behind-release").await;
    let (locking, locker) = lock_row(&scene.admin, scene.name.as_str()).await;
    let before = scene.holder.release_statements().expect("counted");
    let releasing = release(held);
    until_blocked(&scene.admin, locker, 1, scaled_ms(2_000)).await;
    let arriving = arrive(&scene);
    let entries = "SELECT count(*) FROM distlock_locks_waiters WHERE name = $1";
    until_count(&scene.admin, entries, scene.name.as_str(), 1).await;
    let sent = finish(&scene, locking, (releasing, arriving), before).await;
    assert_eq!(sent, [1, 0], "the release found somebody in line");
}
