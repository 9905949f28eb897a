//! Semaphores on ZooKeeper in Curator's `InterProcessSemaphoreV2` layout: under the
//! semaphore's path, `locks/` holds a mutex (our mutex recipe, Curator's `InterProcessMutex`)
//! that serialises acquirers, and `leases/` one ephemeral sequential node per permit. An
//! acquirer takes the mutex, creates its lease node, waits (watching `leases/`) until there are
//! no more lease nodes than permits, and lets the mutex go: permits go out in mutex order, so
//! the lease nodes' creation zxids, the fencing tokens, rise with every grant.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{Busy, Deadline, Grant, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, Claim, LockName, Result, async_trait};
use tokio::time::Instant;
use zookeeper_client::{self as zk, OneshotWatcher};

use crate::errors::{BACKEND, RETRY_PAUSE, convert, is_connection_loss, within};
use crate::held::ZkHeld;
use crate::label::node_data;
use crate::lease_names::{lease_marker, limit_of};
use crate::node;
use crate::nodes::{fencing_token, protected_prefix};
use crate::recipe::Recipe;
use crate::session::Session;
use crate::steps::{OurHold, Place, ZkAttempt, ZkSteps};

/// The child of a semaphore's path that holds its mutex, as Curator names it.
const GATE_CHILD: &str = "locks";
/// The child of a semaphore's path that holds its lease nodes, as Curator names it.
const LEASES_CHILD: &str = "leases";
/// How often letting the mutex go is tried before the acquisition fails (and its cleanup,
/// which deletes the lease too, takes over).
const GATE_RELEASE_TRIES: u32 = 3;

/// The steps of semaphore acquisitions: the service's steps for the mutex, plus the lease.
#[derive(Debug)]
pub(crate) struct ZkSemaphoreSteps {
    pub(crate) steps: Arc<ZkSteps>,
    pub(crate) max_permits: u32,
}

/// One semaphore acquisition: the mutex acquisition, and our lease node once we hold it.
#[derive(Debug)]
pub(crate) struct SemaphoreAttempt {
    gate: ZkAttempt,
    /// The mutex's node while ours holds it.
    gate_held: Option<OurHold>,
    leases: String,
    label: Arc<str>,
    lease: Option<LeaseNode>,
    watch: Option<OneshotWatcher>,
}

/// Our lease node, or the one whose create is in flight (found again by its prefix).
#[derive(Debug)]
struct LeaseNode {
    session: Arc<Session>,
    prefix: String,
    path: Option<(String, i64)>,
}

impl ZkSteps {
    /// The path of `name`'s semaphore: a child of its lock parent, so its nodes never mix with
    /// the mutex's. Curator's `InterProcessSemaphoreV2` on this path shares its permits.
    pub(crate) fn semaphore_path(&self, name: &LockName) -> String {
        format!("{}/{}", self.parent(name), crate::recipe::SEMAPHORE_CHILD)
    }
}

impl ZkSemaphoreSteps {
    /// Our lease node on the session whose node holds the mutex, created if there is none.
    async fn ensure_lease(&self, attempt: &mut SemaphoreAttempt) -> Result<(String, i64)> {
        let Some(gate) = &attempt.gate_held else {
            return Err(internal("a lease without the semaphore's mutex"));
        };
        let lease = attempt.lease.get_or_insert_with(|| LeaseNode {
            session: Arc::clone(&gate.session),
            prefix: protected_prefix(),
            path: None,
        });
        if lease.path.is_none() {
            // Armed from here: the create may take effect even if its answer never comes.
            let marker = lease_marker(self.max_permits);
            let data = node_data(&attempt.label);
            let created = node::create(
                &lease.session,
                &attempt.leases,
                &lease.prefix,
                &marker,
                data,
            )
            .await?;
            lease.path = Some(created);
        }
        lease.path.clone().ok_or_else(|| internal("no lease path"))
    }

    /// Deletes the mutex's node once our lease is granted, so the next acquirer goes on.
    async fn let_gate_go(&self, attempt: &mut SemaphoreAttempt) -> Result<()> {
        let mut tries = 0;
        loop {
            tries += 1;
            match self.steps.clean_up(&mut attempt.gate).await {
                Ok(()) => return Ok(()),
                Err(error) if tries >= GATE_RELEASE_TRIES || !error.is_temporary() => {
                    return Err(error);
                }
                Err(_) => tokio::time::sleep(RETRY_PAUSE).await,
            }
        }
    }
}

fn internal(what: &str) -> lock_core::Error {
    lock_core::Error::new(lock_core::ErrorKind::Backend, format!("internal: {what}"))
}

#[async_trait]
impl LockSteps for ZkSemaphoreSteps {
    type Attempt = SemaphoreAttempt;

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn server(&self) -> &str {
        &self.steps.server
    }

    fn leases(&self) -> &Leases {
        &self.steps.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> SemaphoreAttempt {
        let path = self.steps.semaphore_path(name);
        SemaphoreAttempt {
            gate: ZkSteps::begin_at(format!("{path}/{GATE_CHILD}"), options, Recipe::Mutex),
            gate_held: None,
            leases: format!("{path}/{LEASES_CHILD}"),
            label: Arc::clone(&options.owner_label),
            lease: None,
            watch: None,
        }
    }

    async fn try_once(&self, attempt: &mut SemaphoreAttempt) -> Result<Try> {
        if attempt
            .gate_held
            .as_ref()
            .is_some_and(|gate| gate.session.is_ended())
        {
            // The session's end took the mutex's node and our lease with it: start over.
            (attempt.gate_held, attempt.lease) = (None, None);
        }
        if attempt.gate_held.is_none() {
            match self.steps.place(&mut attempt.gate).await? {
                Place::Holds(gate) => attempt.gate_held = Some(gate),
                Place::Waits(busy) => return Ok(Try::Busy(busy)),
            }
        }
        let (path, czxid) = self.ensure_lease(attempt).await?;
        let Some(session) = attempt
            .lease
            .as_ref()
            .map(|lease| Arc::clone(&lease.session))
        else {
            return Err(internal("no lease"));
        };
        let client = session.client();
        let sent = Instant::now();
        let listed = client.list_and_watch_children(&attempt.leases);
        let (children, watcher) =
            match within(session.operation_timeout(), "acquire", listed).await? {
                Ok(listed) => listed,
                Err(zk::Error::NoNode) => return Ok(Try::Busy(lease_vanished(attempt))),
                Err(error) if is_connection_loss(&error) => {
                    return Ok(Try::Busy(Busy::now().within(RETRY_PAUSE)));
                }
                Err(error) => return Err(convert(error, "acquire")),
            };
        let ours = path.rsplit_once('/').map_or("", |(_, node)| node);
        if !children.iter().any(|child| child == ours) {
            return Ok(Try::Busy(lease_vanished(attempt)));
        }
        if let Some(held) = children
            .iter()
            .filter_map(|child| limit_of(child))
            .find(|limit| *limit != self.max_permits)
        {
            return Err(Claim::mismatched_permits(self.max_permits, held).with_backend(BACKEND));
        }
        if children.len() > self.max_permits as usize {
            attempt.watch = Some(watcher);
            return Ok(Try::Busy(Busy::pushed()));
        }
        self.let_gate_go(attempt).await?;
        let (held, lost) = ZkHeld::start(Arc::clone(&session), path, None);
        let grant = Grant::new(fencing_token(czxid), held, sent)
            .fixed_lease(session.session_timeout())
            .lost(lost);
        Ok(Try::Granted(grant))
    }

    async fn wait(&self, attempt: &mut SemaphoreAttempt, until: Deadline) {
        let Some(watcher) = attempt.watch.take() else {
            return self.steps.wait(&mut attempt.gate, until).await;
        };
        let ended = attempt
            .lease
            .as_ref()
            .map(|lease| lease.session.ended().clone());
        let ended = async {
            match ended {
                Some(ended) => ended.cancelled_owned().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = watcher.changed() => {}
            () = until.sleep() => {}
            () = ended => {}
        }
    }

    /// Deletes our lease node and the mutex's node, so nobody waits for an acquisition that
    /// gave up.
    async fn abandon(&self, attempt: &mut SemaphoreAttempt) -> Result<()> {
        self.clean_up(attempt).await
    }

    /// Deletes our lease node (or, if its create's answer never came, every lease node with
    /// our prefix), then the mutex's; succeeds once they are known gone or the session has
    /// ended (which deletes them).
    async fn clean_up(&self, attempt: &mut SemaphoreAttempt) -> Result<()> {
        if let Some(lease) = &attempt.lease {
            if !lease.session.is_ended() {
                let deleted = match &lease.path {
                    Some((path, _)) => node::delete(&lease.session, path).await,
                    None => {
                        node::delete_prefixed(&lease.session, &attempt.leases, &lease.prefix).await
                    }
                };
                match deleted {
                    Err(_) if lease.session.is_ended() => {}
                    deleted => deleted?,
                }
            }
            attempt.lease = None;
        }
        self.steps.clean_up(&mut attempt.gate).await
    }

    fn needs_cleanup(&self, attempt: &SemaphoreAttempt) -> bool {
        attempt.lease.is_some() || self.steps.needs_cleanup(&attempt.gate)
    }

    /// Until the session ends, which deletes whatever is left.
    fn cleanup_window(&self, _options: &AcquireOptions) -> Option<Duration> {
        None
    }
}

/// Our lease node (or its parent) is gone, deleted behind our back: make a new one at once.
fn lease_vanished(attempt: &mut SemaphoreAttempt) -> Busy {
    attempt.lease = None;
    Busy::now()
}
