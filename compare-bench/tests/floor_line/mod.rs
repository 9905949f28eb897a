//! The scene both statement floors' line tests play: three clients of one lock, the first
//! holding while the other two queue one after another, then granted in arrival order as each
//! holder releases, each grant taking the granted client's waiter entry with it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::{Contender, Held};
use tokio::task::JoinHandle;

type Acquiring = JoinHandle<Result<Box<dyn Held>, String>>;

/// How soon each grant must follow the release before it, and how a case counts the lock's
/// waiter entries.
pub(crate) struct Line<C, E> {
    pub(crate) clients: [Arc<C>; 3],
    pub(crate) entries: E,
    pub(crate) first_granted_within: Duration,
    pub(crate) second_granted_within: Duration,
}

impl<C, E, F> Line<C, E>
where
    C: Contender + 'static,
    E: Fn() -> F,
    F: Future<Output = i64>,
{
    /// Plays the scene, and ends with a grant to the first client once the line is empty.
    pub(crate) async fn grants_in_arrival_order(self) {
        let [first, second, third] = &self.clients;
        let held = first.acquire().await.expect("uncontended grant");
        let waiting = acquiring(second);
        self.line_of(1).await;
        let behind = acquiring(third);
        self.line_of(2).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        if waiting.is_finished() || behind.is_finished() {
            panic!("an acquire ended while the first client held");
        }

        held.release().await.expect("release");
        let granted = granted_within(waiting, self.first_granted_within, "the first in line").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !behind.is_finished(),
            "the second in line was granted while the first held"
        );
        assert_eq!((self.entries)().await, 1, "the grant left the entry");
        granted.release().await.expect("second release");
        let last = granted_within(behind, self.second_granted_within, "the second in line").await;
        assert_eq!((self.entries)().await, 0, "the grant left the entry");
        last.release().await.expect("third release");
        let again = first
            .acquire()
            .await
            .expect("a grant once the line is empty");
        again
            .release()
            .await
            .expect("a release with nobody in line");
    }

    /// Waits until the lock has `count` waiter entries.
    async fn line_of(&self, count: i64) {
        for _ in 0..100 {
            if (self.entries)().await == count {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the line never reached {count} entries");
    }
}

/// Starts `client`'s acquire in a task; its result says whether it was granted.
fn acquiring<C: Contender + 'static>(client: &Arc<C>) -> Acquiring {
    let client = Arc::clone(client);
    tokio::spawn(async move { client.acquire().await.map_err(|error| error.to_string()) })
}

/// The acquire of `task`, which must end within `within`.
async fn granted_within(task: Acquiring, within: Duration, who: &str) -> Box<dyn Held> {
    tokio::time::timeout(within, task)
        .await
        .unwrap_or_else(|_| panic!("{who} was not granted within {within:?} of the release"))
        .expect("the waiting task")
        .expect("the waiting acquire")
}
