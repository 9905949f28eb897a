//! A line of waiters for the arrival-order cases: each on a service of its own, as separate
//! processes would be, arriving one after another.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, LockName};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use tokio::task::JoinHandle;

use super::{SqlTarget, unique};

/// A service of its own, its schema step done (and on PostgreSQL its listener subscribed), so
/// its first try is a plain acquire statement.
pub(crate) async fn service(target: &SqlTarget) -> Arc<SqlLock> {
    let lock = target.lock().await;
    let warm = unique("line/warm-up");
    let guard = lock.try_acquire(&warm).await.expect("try").expect("free");
    guard.release().await.expect("release");
    Arc::new(lock)
}

/// Waiters for one name, started by [`Line::queue_up`].
pub(crate) struct Line {
    services: Vec<Arc<SqlLock>>,
    tasks: Vec<JoinHandle<()>>,
    order: Arc<Mutex<Vec<usize>>>,
}

impl Line {
    /// Starts `count` waiters for `name`, each on its own service; each starts once the one
    /// before is in line (as `watcher`'s `inspect` counts), pushes its index when granted,
    /// holds for `hold`, and releases.
    pub(crate) async fn queue_up(
        target: &SqlTarget,
        watcher: &SqlLock,
        name: &LockName,
        count: usize,
        hold: Duration,
    ) -> Self {
        let order = Arc::new(Mutex::new(Vec::new()));
        let (mut services, mut tasks) = (Vec::new(), Vec::new());
        for index in 0..count {
            let lock = service(target).await;
            services.push(Arc::clone(&lock));
            let (wanted, order) = (name.clone(), Arc::clone(&order));
            tasks.push(tokio::spawn(async move {
                let guard = lock.acquire_timeout(&wanted, scaled_ms(30_000)).await;
                let guard = guard.expect("granted in time");
                order
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(index);
                tokio::time::sleep(hold).await;
                guard.release().await.expect("release");
            }));
            wait_for_line(watcher, name, index as u64 + 1).await;
        }
        Self {
            services,
            tasks,
            order,
        }
    }

    /// The acquire statements the waiters' services have sent so far.
    pub(crate) fn statements(&self) -> u64 {
        self.services
            .iter()
            .map(|lock| lock.acquire_statements())
            .sum()
    }

    /// The indices of the waiters granted so far, in the order they were granted.
    pub(crate) fn granted_so_far(&self) -> Vec<usize> {
        let order = self.order.lock().unwrap_or_else(PoisonError::into_inner);
        order.clone()
    }

    /// Waits until every waiter released; the indices in the order they were granted.
    pub(crate) async fn granted(&mut self) -> Vec<usize> {
        for task in self.tasks.drain(..) {
            task.await.expect("waiter");
        }
        self.granted_so_far()
    }
}

/// Waits until `name` has `count` waiters in line, by `inspect`.
async fn wait_for_line(lock: &SqlLock, name: &LockName, count: u64) {
    let deadline = tokio::time::Instant::now() + scaled_ms(10_000);
    while lock.inspect(name).await.expect("inspect").waiters < count {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waiter {count} never queued"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
