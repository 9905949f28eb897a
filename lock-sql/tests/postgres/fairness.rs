//! PostgreSQL serves waiters in arrival order, and a release wakes the first waiter in line
//! alone: no herd of acquire statements, however many wait.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, ErrorKind, LockName};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;

use crate::support::unique;

/// A service of its own, as another process would have: its own pool and listener, ready
/// (schema checked, listener subscribed) before it returns.
async fn service(url: &str) -> Arc<SqlLock> {
    let lock = SqlLock::builder(url).connect().await.expect("connect");
    let warm = unique("fairness/warm-up");
    let guard = lock.try_acquire(&warm).await.expect("try").expect("free");
    guard.release().await.expect("release");
    Arc::new(lock)
}

/// Starts `count` waiters for `name`, each on its own service, arriving one after another;
/// each pushes its index when granted, holds for `hold`, and releases.
async fn queue_up(
    url: &str,
    name: &LockName,
    count: usize,
    hold: Duration,
) -> (
    Vec<Arc<SqlLock>>,
    Vec<tokio::task::JoinHandle<()>>,
    Arc<Mutex<Vec<usize>>>,
) {
    let order = Arc::new(Mutex::new(Vec::new()));
    let (mut services, mut tasks) = (Vec::new(), Vec::new());
    for index in 0..count {
        let lock = service(url).await;
        services.push(Arc::clone(&lock));
        let (wanted, order) = (name.clone(), Arc::clone(&order));
        tasks.push(tokio::spawn(async move {
            let guard = lock
                .acquire_timeout(&wanted, scaled_ms(30_000))
                .await
                .expect("granted in time");
            order
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(index);
            tokio::time::sleep(hold).await;
            guard.release().await.expect("release");
        }));
        // Arrive one after another: the next starts once this one's entry is in line.
        let deadline = tokio::time::Instant::now() + scaled_ms(10_000);
        while services[0].inspect(name).await.expect("inspect").waiters <= index as u64 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "waiter {index} never queued"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    (services, tasks, order)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_are_granted_in_arrival_order() {
    const WAITERS: usize = 8;
    let Some(url) = crate::url() else { return };
    let name = unique("fairness/order");
    let holder = service(&url).await;
    assert!(holder.capabilities().fair_fifo);
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let (_services, tasks, order) = queue_up(&url, &name, WAITERS, Duration::from_millis(5)).await;
    held.release().await.expect("release");
    for task in tasks {
        task.await.expect("waiter");
    }
    let order = order.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(
        order,
        (0..WAITERS).collect::<Vec<_>>(),
        "grants out of arrival order"
    );
}

/// An entry queued by another process (a row put in the waiters table directly, which no
/// wake-up reaches) holds back a newcomer while the lock is free, until the entry is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_queued_entry_holds_back_a_newcomer_on_a_free_lock() {
    let Some(url) = crate::url() else { return };
    let name = unique("fairness/barging");
    let lock = service(&url).await;
    let held = lock.try_acquire(&name).await.expect("try").expect("free");
    held.release().await.expect("release");
    let admin = sqlx::PgPool::connect(&url).await.expect("admin pool");
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

/// Eight waiters on eight services: each release wakes one of them, so after the queue
/// formed every waiter sends one more acquire statement, its winning one. Waking everyone
/// at each release would send 8 + 7 + ... + 1 = 36.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_wakes_only_the_first_waiter() {
    const WAITERS: usize = 8;
    let Some(url) = crate::url() else { return };
    let name = unique("fairness/herd");
    let holder = service(&url).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let (services, tasks, _order) = queue_up(&url, &name, WAITERS, Duration::from_millis(20)).await;
    let sent = |services: &[Arc<SqlLock>]| -> u64 {
        services.iter().map(|lock| lock.acquire_statements()).sum()
    };
    let queued = sent(&services);
    held.release().await.expect("release");
    for task in tasks {
        task.await.expect("waiter");
    }
    let woken = sent(&services) - queued;
    assert!(
        woken <= WAITERS as u64 + 2,
        "{WAITERS} handoffs took {woken} acquire statements"
    );
}

/// The first waiter gives up while the holder still holds; the release then wakes the next
/// one, which is granted at once although its own timers would sleep far longer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_leaving_the_head_of_the_line_hands_its_turn_on() {
    let Some(url) = crate::url() else { return };
    let name = unique("fairness/leaving");
    let holder = service(&url).await;
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let first = service(&url).await;
    let leaving = {
        let name = name.clone();
        tokio::spawn(async move { first.acquire_timeout(&name, scaled_ms(400)).await.err() })
    };
    tokio::time::sleep(scaled_ms(100)).await;
    let second = service(&url).await;
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
