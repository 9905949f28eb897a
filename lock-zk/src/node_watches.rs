//! The lock nodes a session holds, watched by one task for the whole session: a node deleted
//! while its hold lasts (an operator's force release) or the session's end fires that hold's
//! lost signal. A hold costs an entry in a map and one pending watch, not a task of its own.
//!
//! A node is watched [`WATCH_AFTER`] into its hold: a hold released sooner (most are) costs no
//! request for it, and a node deleted sooner is found by that first request, so a deletion is
//! signalled at most that much later than a watch set at once would.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use lock_core::CancellationToken;
use tokio::sync::mpsc;
use tokio::time::Instant;
use zookeeper_client::{self as zk, Client, EventType, OneshotWatcher};

/// How long a hold lasts before its node is watched.
pub(crate) const WATCH_AFTER: Duration = Duration::from_millis(20);

/// How soon a watch that failed on connection trouble is asked for again. The hold is
/// suspended, not lost, while the session lives.
const RETRY_AFTER: Duration = Duration::from_millis(100);

/// The holds of one session: each node's path and its hold's lost signal.
#[derive(Debug, Default)]
struct Holds(Mutex<HashMap<Arc<str>, CancellationToken>>);

impl Holds {
    fn map(&self) -> MutexGuard<'_, HashMap<Arc<str>, CancellationToken>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_held(&self, path: &str) -> bool {
        self.map().contains_key(path)
    }

    /// Fires the lost signal of the hold of `path`, if it still lasts.
    fn lose(&self, path: &str) {
        if let Some(lost) = self.map().remove(path) {
            tracing::warn!(%path, "lock node deleted: the hold is lost");
            lost.cancel();
        }
    }

    /// Fires the lost signal of every hold (the session ended: its nodes are gone).
    fn lose_all(&self) {
        let lost: Vec<CancellationToken> = self.map().drain().map(|(_, lost)| lost).collect();
        if !lost.is_empty() {
            tracing::warn!(
                holds = lost.len(),
                "ZooKeeper session ended: its holds are lost"
            );
        }
        lost.iter().for_each(CancellationToken::cancel);
    }
}

/// A session's node watches: [`watch`](Self::watch) a hold's node, [`forget`](Self::forget)
/// it before deleting it.
#[derive(Debug)]
pub(crate) struct NodeWatches {
    holds: Arc<Holds>,
    starts: mpsc::UnboundedSender<Arc<str>>,
    ended: CancellationToken,
}

impl NodeWatches {
    /// Starts the session's watcher task. It ends when `ended` fires (firing every hold's lost
    /// signal) or when `dropped` fires (the session is gone, and with it every hold).
    pub(crate) fn start(
        client: Client,
        ended: CancellationToken,
        dropped: CancellationToken,
    ) -> Self {
        let holds = Arc::new(Holds::default());
        let (starts, requests) = mpsc::unbounded_channel();
        let watcher = Watcher {
            client,
            holds: Arc::clone(&holds),
            due: BinaryHeap::new(),
        };
        tokio::spawn(watcher.run(requests, ended.clone(), dropped));
        Self {
            holds,
            starts,
            ended,
        }
    }

    /// Watches the node at `path`, held from now: `lost` fires when the node is deleted or
    /// the session ends, until [`forget`](Self::forget).
    pub(crate) fn watch(&self, path: Arc<str>, lost: CancellationToken) {
        self.holds.map().insert(Arc::clone(&path), lost);
        // After the session's end the watcher has fired the holds it knew, or is firing them.
        if self.starts.send(path).is_err() || self.ended.is_cancelled() {
            self.holds.lose_all();
        }
    }

    /// Stops reporting the node at `path`: called first thing in a release, so our own
    /// delete never looks like a loss.
    pub(crate) fn forget(&self, path: &str) {
        self.holds.map().remove(path);
    }
}

/// What became of a node's watch.
enum Seen {
    /// The node was deleted, or found missing.
    Deleted,
    /// The node changed (its data, when a hold is relabelled): watch it again.
    Changed,
    /// Connection trouble: ask again after [`RETRY_AFTER`].
    Trouble,
}

struct Watcher {
    client: Client,
    holds: Arc<Holds>,
    /// Nodes to watch, each from its instant, soonest first.
    due: BinaryHeap<Reverse<(Instant, Arc<str>)>>,
}

impl Watcher {
    async fn run(
        mut self,
        mut starts: mpsc::UnboundedReceiver<Arc<str>>,
        ended: CancellationToken,
        dropped: CancellationToken,
    ) {
        // Watches being set (a request in flight each), and watches set, waiting to fire: kept
        // apart so that a waiting watch, which lasts as long as its hold, is not the size of a
        // request.
        let (mut asking, mut waiting) = (FuturesUnordered::new(), FuturesUnordered::new());
        loop {
            let next = self.due.peek().map(|Reverse((at, _))| *at);
            tokio::select! {
                biased;
                () = ended.cancelled() => return self.holds.lose_all(),
                () = dropped.cancelled() => return,
                Some(path) = starts.recv() => self.after(WATCH_AFTER, path),
                () = sleep_until(next) => {
                    let now = Instant::now();
                    while let Some(Reverse((at, path))) = self.due.pop() {
                        if at > now {
                            self.due.push(Reverse((at, path)));
                            break;
                        }
                        if self.holds.is_held(&path) {
                            asking.push(ask(self.client.clone(), path));
                        }
                    }
                }
                Some((path, asked)) = asking.next() => match asked {
                    Ok(watcher) => waiting.push(wait(path, watcher)),
                    Err(seen) => self.seen(path, seen, &mut asking),
                },
                Some((path, seen)) = waiting.next() => self.seen(path, seen, &mut asking),
            }
        }
    }

    fn after(&mut self, delay: Duration, path: Arc<str>) {
        self.due.push(Reverse((Instant::now() + delay, path)));
    }

    fn seen(&mut self, path: Arc<str>, seen: Seen, asking: &mut FuturesUnordered<Asking>) {
        match seen {
            Seen::Deleted => self.holds.lose(&path),
            Seen::Changed if self.holds.is_held(&path) => {
                asking.push(ask(self.client.clone(), path));
            }
            Seen::Changed => {}
            Seen::Trouble => self.after(RETRY_AFTER, path),
        }
    }
}

/// A watch being set.
type Asking = Pin<Box<dyn Future<Output = (Arc<str>, Result<OneshotWatcher, Seen>)> + Send>>;

/// Sets a data watch on the node at `path`.
fn ask(client: Client, path: Arc<str>) -> Asking {
    Box::pin(async move {
        let asked = match client.get_and_watch_data(&path).await {
            Ok((_, _, watcher)) => Ok(watcher),
            Err(zk::Error::NoNode) => Err(Seen::Deleted),
            Err(_) => Err(Seen::Trouble),
        };
        (path, asked)
    })
}

/// Waits for the watch on the node at `path` to fire.
async fn wait(path: Arc<str>, watcher: OneshotWatcher) -> (Arc<str>, Seen) {
    let seen = match watcher.changed().await.event_type {
        EventType::NodeDeleted => Seen::Deleted,
        _ => Seen::Changed,
    };
    (path, seen)
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
