//! The ZooKeeper recipe's steps: our ephemeral sequential node, created once per session; the
//! lowest node holds; each waiter watches only the node just before its own. A create learns
//! its place from the listing sent with it, or, after a hold that was alone, from its zxid
//! alone (see [`lone`](crate::lone)).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lock_core::backend::{Busy, Deadline, Grant, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, LockName, Result, async_trait};
use tokio::time::Instant;
use zookeeper_client::{self as zk, EventType, OneshotWatcher};

use crate::errors::{BACKEND, RETRY_PAUSE, convert, is_connection_loss, within};
use crate::held::ZkHeld;
use crate::lone::{LoneHold, LoneNotes};
use crate::names::push_node_name;
use crate::node;
use crate::nodes::{contenders_of, fencing_token};
use crate::recipe::{ELECTION_CHILD, RW_CHILD, Recipe};
use crate::session::Session;
use crate::sessions::Sessions;

mod our_node;

use our_node::OurNode;

/// A service's steps, shared by its clones.
#[derive(Debug)]
pub(crate) struct ZkSteps {
    pub(crate) sessions: Sessions,
    pub(crate) root: String,
    pub(crate) server: String,
    /// Watch notifications on a predecessor this service's waiters received.
    pub(crate) wakeups: AtomicU64,
    pub(crate) leases: Leases,
    /// What the last lone holds of each lock left for the next acquisition.
    pub(crate) lone: Arc<LoneNotes>,
}

/// One acquisition: the lock's parent, the caller's deadline (reopening a session respects
/// it), the owner label our node carries, our node, and the watch on our predecessor.
#[derive(Debug)]
pub(crate) struct ZkAttempt {
    parent: String,
    recipe: Recipe,
    deadline: Deadline,
    label: Arc<str>,
    node: Option<OurNode>,
    watch: Option<OneshotWatcher>,
    /// Set while the node watched is the only one ahead of ours: when the watch was set.
    next_in_line: Option<Instant>,
    /// The watched node was deleted while it was the only one ahead of ours.
    ahead_gone: bool,
}

/// Where an acquisition's node stands in its queue.
pub(crate) enum Place {
    Holds(OurHold),
    Waits(Busy),
}

/// A node that holds: its session, path and creation zxid, when the request that showed it
/// first was sent, and whether it was alone in its queue (see [`lone`](crate::lone)).
#[derive(Debug)]
pub(crate) struct OurHold {
    pub(crate) session: Arc<Session>,
    pub(crate) path: String,
    pub(crate) czxid: i64,
    pub(crate) sent: Instant,
    pub(crate) alone: bool,
}

impl ZkSteps {
    pub(crate) fn parent(&self, name: &LockName) -> String {
        let mut parent = String::with_capacity(self.root.len() + name.as_str().len() + 9);
        parent.push_str(&self.root);
        parent.push('/');
        push_node_name(&mut parent, name);
        parent
    }

    /// The parent of `name`'s read-write lock nodes: a child of its lock parent, so they never
    /// mix with the mutex's. Curator's `InterProcessReadWriteLock` on this path shares it.
    pub(crate) fn rw_parent(&self, name: &LockName) -> String {
        format!("{}/{RW_CHILD}", self.parent(name))
    }

    /// The parent of `name`'s election nodes: a child of its lock parent. Curator's
    /// `LeaderLatch` on this path takes part in the same election.
    pub(crate) fn election_parent(&self, name: &LockName) -> String {
        format!("{}/{ELECTION_CHILD}", self.parent(name))
    }

    /// Starts an acquisition of `name` in `recipe`'s queue. No I/O.
    pub(crate) fn begin_as(
        &self,
        name: &LockName,
        options: &AcquireOptions,
        recipe: Recipe,
    ) -> ZkAttempt {
        let parent = match recipe {
            Recipe::Mutex => self.parent(name),
            Recipe::Read | Recipe::Write => self.rw_parent(name),
            Recipe::Latch => self.election_parent(name),
        };
        Self::begin_at(parent, options, recipe)
    }

    /// Starts an acquisition in `recipe`'s queue under `parent`. No I/O.
    pub(crate) fn begin_at(parent: String, options: &AcquireOptions, recipe: Recipe) -> ZkAttempt {
        ZkAttempt {
            parent,
            recipe,
            deadline: Deadline::after(options.wait),
            label: Arc::clone(&options.owner_label),
            node: None,
            watch: None,
            next_in_line: None,
            ahead_gone: false,
        }
    }

    /// Where `attempt`'s node stands in its queue, after creating it if there is none: it
    /// holds, or it waits (watching the node it waits for, when there is one).
    pub(crate) async fn place(&self, attempt: &mut ZkAttempt) -> Result<Place> {
        if let Some(ours) = first_in_line(attempt) {
            return Ok(Place::Holds(ours));
        }
        let (parent, recipe) = (attempt.parent.clone(), attempt.recipe);
        let ensured = self.ensure_node(attempt).await?;
        let (session, path, czxid) = (Arc::clone(ensured.session), ensured.path, ensured.czxid);
        if let Some(sent) = ensured.alone_since {
            let alone = true;
            return Ok(Place::Holds(OurHold {
                session,
                path,
                czxid,
                sent,
                alone,
            }));
        }
        let listed = ensured.listed;
        let client = session.client();
        let limit = session.operation_timeout();
        let (sent, listed) = match listed {
            Some(listed) => listed,
            None => {
                let sent = Instant::now();
                (
                    sent,
                    within(limit, "acquire", client.list_children(&parent)).await?,
                )
            }
        };
        let children = match listed {
            Ok(children) => children,
            Err(zk::Error::NoNode) => return Ok(Place::Waits(vanished(attempt))),
            Err(error) if is_connection_loss(&error) => {
                return Ok(Place::Waits(Busy::now().within(RETRY_PAUSE)));
            }
            Err(error) => return Err(convert(error, "acquire")),
        };
        let contenders = contenders_of(children, recipe.queue());
        let ours = path.rsplit_once('/').map_or("", |(_, node)| node);
        let Some(index) = contenders.iter().position(|c| c.node == ours) else {
            return Ok(Place::Waits(vanished(attempt)));
        };
        let Some(blocker) = recipe.blocker(&contenders, index) else {
            let alone = contenders.len() == 1;
            return Ok(Place::Holds(OurHold {
                session,
                path,
                czxid,
                sent,
                alone,
            }));
        };
        let predecessor = format!("{parent}/{}", contenders[blocker].node);
        let watch_sent = Instant::now();
        match within(limit, "acquire", client.get_and_watch_data(&predecessor)).await? {
            Ok((_, _, watcher)) => {
                attempt.watch = Some(watcher);
                attempt.next_in_line = (index == 1).then_some(watch_sent);
                Ok(Place::Waits(Busy::pushed()))
            }
            // Gone between the listing and the watch: look again at once.
            Err(zk::Error::NoNode) => Ok(Place::Waits(Busy::now())),
            Err(error) if is_connection_loss(&error) => {
                Ok(Place::Waits(Busy::now().within(RETRY_PAUSE)))
            }
            Err(error) => Err(convert(error, "acquire")),
        }
    }
}

#[async_trait]
impl LockSteps for ZkSteps {
    type Attempt = ZkAttempt;

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn server(&self) -> &str {
        &self.server
    }

    fn leases(&self) -> &Leases {
        &self.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> ZkAttempt {
        self.begin_as(name, options, Recipe::Mutex)
    }

    async fn try_once(&self, attempt: &mut ZkAttempt) -> Result<Try> {
        Ok(match self.place(attempt).await? {
            Place::Holds(ours) => {
                if attempt.recipe == Recipe::Latch {
                    crate::election::register(&ours.session, &attempt.parent, ours.czxid).await;
                }
                let lone = (ours.alone && attempt.recipe == Recipe::Mutex).then(|| LoneHold {
                    notes: Arc::clone(&self.lone),
                    czxid: ours.czxid,
                });
                let session = Arc::clone(&ours.session);
                let (held, lost) = ZkHeld::start(session, ours.path, lone);
                let grant = Grant::new(fencing_token(ours.czxid), held, ours.sent)
                    .fixed_lease(ours.session.session_timeout())
                    .lost(lost);
                Try::Granted(grant)
            }
            Place::Waits(busy) => Try::Busy(busy),
        })
    }

    async fn wait(&self, attempt: &mut ZkAttempt, until: Deadline) {
        let Some(watcher) = attempt.watch.take() else {
            return until.sleep().await;
        };
        let ended = attempt
            .node
            .as_ref()
            .map(|node| node.session.ended().clone());
        let ended = async {
            match ended {
                Some(ended) => ended.cancelled_owned().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = watcher.changed() => {
                self.wakeups.fetch_add(1, Ordering::Relaxed);
                attempt.ahead_gone = event.event_type == EventType::NodeDeleted;
            }
            () = until.sleep() => {}
            () = ended => {}
        }
    }

    /// Deletes our node, so the next waiter does not wait for an acquisition that gave up.
    async fn abandon(&self, attempt: &mut ZkAttempt) -> Result<()> {
        self.clean_up(attempt).await
    }

    /// Deletes our node, or, if its create's answer never came, every node with our prefix;
    /// succeeds once they are known gone, or once the session has ended (which deletes them).
    async fn clean_up(&self, attempt: &mut ZkAttempt) -> Result<()> {
        let Some(node) = &attempt.node else {
            return Ok(());
        };
        if node.session.is_ended() {
            return Ok(());
        }
        let outcome = match &node.path {
            Some((path, _)) => node::delete(&node.session, path).await,
            None => node::delete_prefixed(&node.session, &attempt.parent, &node.prefix).await,
        };
        match outcome {
            Err(_) if node.session.is_ended() => Ok(()),
            outcome => outcome,
        }
    }

    fn needs_cleanup(&self, attempt: &ZkAttempt) -> bool {
        attempt.node.is_some()
    }

    /// Until the session ends, which deletes whatever is left.
    fn cleanup_window(&self, _options: &AcquireOptions) -> Option<Duration> {
        None
    }
}

/// Our node as the holder, without listing the queue again, when the only node ahead of it
/// was deleted: sequence numbers only grow, so no node can come ahead of ours since. Only
/// while the answer to the watch's request is recent enough to vouch for our session (a third
/// of its timeout): it proves that the ensemble heard from the session then, so the session,
/// and our node with it, lives on for a session timeout from then.
fn first_in_line(attempt: &mut ZkAttempt) -> Option<OurHold> {
    let next_in_line = attempt.next_in_line.take();
    if !std::mem::take(&mut attempt.ahead_gone) {
        return None;
    }
    let watch_sent = next_in_line?;
    let node = attempt.node.as_ref()?;
    let (path, czxid) = node.path.clone()?;
    let session = &node.session;
    let recent = watch_sent.elapsed() < session.session_timeout() / 3;
    (recent && !session.is_ended()).then(|| OurHold {
        session: Arc::clone(session),
        path,
        czxid,
        sent: watch_sent,
        alone: false,
    })
}

/// Our node (or its parent) is gone, deleted behind our back: forget it and try again at once
/// with a new one.
fn vanished(attempt: &mut ZkAttempt) -> Busy {
    attempt.node = None;
    Busy::now()
}
