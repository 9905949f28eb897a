//! A PostgreSQL first try on a lock row the service saw exist takes it over with an `UPDATE`
//! instead of the upsert (`acquire_free.sql`): a try that will not wait sends
//! `acquire_row.sql`, which reports a held lock as the upsert does; an acquisition that will
//! wait sends the bare `take_row.sql`. A row deleted behind the service's back is inserted
//! again, one statement later, with a larger fencing token.

use lock_core::{DistributedLockExt, LockName};
use lock_sql::SqlLock;
use sqlx::PgPool;

use crate::support::line::service;
use crate::support::{SqlTarget, unique};

/// Pairs the case makes on the known row.
const PAIRS: u64 = 20;

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// The first tries `lock` sent since `before`:
/// `[acquire_free.sql, acquire_row.sql, take_row.sql]`.
fn tries_since(lock: &SqlLock, before: [u64; 3]) -> [u64; 3] {
    let now = lock.first_try_statements().expect("counted on PostgreSQL");
    [now[0] - before[0], now[1] - before[1], now[2] - before[2]]
}

/// How a pair acquires.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// A single try, which will not wait.
    Try,
    /// An acquisition that would wait.
    Wait,
}

/// One uncontended pair on `name`, acquired `via`: its fencing token and the first tries it
/// sent.
async fn pair(lock: &SqlLock, name: &LockName, via: Via) -> (u64, [u64; 3]) {
    let before = lock.first_try_statements().expect("counted");
    let guard = match via {
        Via::Try => lock.try_acquire(name).await.expect("try").expect("free"),
        Via::Wait => lock.acquire(name).await.expect("acquire"),
    };
    let fence = guard.fencing_token();
    guard.release().await.expect("release");
    (fence, tries_since(lock, before))
}

/// The first tries a pair sends: on a name never seen, on its known row, on that row once
/// deleted, and in the two pairs after that.
struct Sends {
    first: [u64; 3],
    known: [u64; 3],
    gone: [u64; 3],
    after: [[u64; 3]; 2],
}

/// Pairs `via` on a new name, then on its known row, then with the row deleted: each sends
/// what `sends` says, and every fence is above the one before.
async fn known_then_deleted(via: Via, sends: Sends) {
    let Some(target) = target() else { return };
    let name = unique("known/row");
    let lock = service(&target).await;
    let (mut last, sent) = pair(&lock, &name, via).await;
    assert_eq!(sent, sends.first, "the first pair on a name never seen");
    for round in 0..PAIRS {
        let (fence, sent) = pair(&lock, &name, via).await;
        assert_eq!(sent, sends.known, "round {round}: a pair on a known row");
        assert!(fence > last, "round {round}: fence {fence} after {last}");
        last = fence;
    }
    let admin = PgPool::connect(&target.url).await.expect("admin pool");
    sqlx::query("DELETE FROM distlock_locks WHERE name = $1")
        .bind(name.as_str())
        .execute(&admin)
        .await
        .expect("delete the row");
    let (fence, sent) = pair(&lock, &name, via).await;
    assert_eq!(sent, sends.gone, "the pair that finds the known row gone");
    assert!(fence > last, "fence {fence} after the row's {last}");
    for (after, expected) in sends.after.into_iter().enumerate() {
        let sent = pair(&lock, &name, via).await.1;
        assert_eq!(
            sent, expected,
            "pair {after} after the row was inserted again"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_known_row_is_updated_and_a_deleted_one_is_inserted_again() {
    known_then_deleted(
        Via::Try,
        Sends {
            first: [1, 0, 0],
            known: [0, 1, 0],
            // acquire_row.sql finds the row gone; the upsert inserts it.
            gone: [1, 1, 0],
            after: [[0, 1, 0], [0, 1, 0]],
        },
    )
    .await;
}

/// An acquisition that will wait takes a known row with the bare `take_row.sql`; one that finds
/// the row deleted goes on to the statement that places its entry, which inserts the row and
/// grants it, and the next first try learns the row again with the upsert.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiting_acquisition_takes_a_known_row_with_a_bare_update() {
    known_then_deleted(
        Via::Wait,
        Sends {
            first: [1, 0, 0],
            known: [0, 0, 1],
            gone: [0, 0, 1],
            after: [[1, 0, 0], [0, 0, 1]],
        },
    )
    .await;
}

/// A service that knows the row is refused while another holds the lock, with the holder's
/// lease; its blocking acquisition is granted once the holder releases, with a larger token.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_held_known_row_is_refused_and_waited_for() {
    let Some(target) = target() else { return };
    let name = unique("known/held");
    let (holder, waiter) = (service(&target).await, service(&target).await);
    pair(&waiter, &name, Via::Try).await;
    let guard = holder.try_acquire(&name).await.expect("try").expect("free");
    let before = waiter.first_try_statements().expect("counted");
    let refused = waiter.try_acquire(&name).await.expect("try");
    assert!(refused.is_none(), "granted a lock another holds");
    assert_eq!(tries_since(&waiter, before), [0, 1, 0], "the refused try");
    let before = waiter.first_try_statements().expect("counted");
    let waiting = tokio::spawn({
        let (waiter, name) = (waiter.clone(), name.clone());
        async move { waiter.acquire(&name).await.expect("acquire") }
    });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(!waiting.is_finished(), "granted while the lock is held");
    let fence = guard.fencing_token();
    guard.release().await.expect("release");
    let granted = waiting.await.expect("waiter task");
    assert!(granted.fencing_token() > fence, "the waiter's fence");
    assert_eq!(
        tries_since(&waiter, before),
        [0, 0, 1],
        "the waiting acquisition's first try"
    );
    granted.release().await.expect("release");
}
