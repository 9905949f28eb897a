//! The single-master lock's steps: the acquire script, a place in the waiter queue, pub/sub
//! wake-ups, and replica acknowledgement on a connection of its own.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{Busy, Deadline, Grant, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, LockName, Result, async_trait};
use tokio::time::Instant;

use crate::connection::Connection;
use crate::error::BACKEND;
use crate::held::SingleHeld;
use crate::inbox::Registration;
use crate::invocation::{self, Fence, Owner, Waiting};
use crate::keys::LockKeys;
use crate::node::{Attempt, Node, read_attempt};
use crate::replicas::Replicas;
use crate::subscriber::{Subscriber, Subscription, Wakes};
use crate::token::new_token;

/// What a single-master service shares between its clones and holds.
#[derive(Debug)]
pub(crate) struct Single {
    pub(crate) node: Node,
    pub(crate) subscriber: Subscriber,
    pub(crate) prefix: String,
    pub(crate) replicas: Option<Replicas>,
    pub(crate) waiter_ttl: Duration,
    pub(crate) leases: Leases,
}

/// One acquisition: its keys, owner token and label, its queue ttl (waiting acquisitions
/// queue; a single try only checks that nobody queued first), where it hears its turn (its
/// place in the service's inbox from the start, or, in a cluster, a subscription of its own
/// once it waits), and the dedicated connection of a replicated acquire in flight.
#[derive(Debug)]
pub(crate) struct RedisAttempt {
    keys: LockKeys,
    token: String,
    label: Arc<str>,
    lease: Duration,
    queue_ttl: Option<Duration>,
    registration: Option<Registration>,
    subscription: Option<Subscription>,
    dedicated: Option<Connection>,
    /// When the last try that found the lock held was sent: a release that grants this
    /// attempt the lock runs after that try, so the lease runs from no earlier than then.
    busy_sent: Option<Instant>,
    /// The fence of a grant a release made and announced.
    handed: Option<u64>,
}

impl Single {
    /// The grant of `attempt`'s lock with `fence`, its lease counted from `sent`.
    fn granted(&self, attempt: &RedisAttempt, fence: u64, sent: Instant) -> Try {
        let held = SingleHeld {
            node: self.node.clone(),
            lock: attempt.keys.lock().into(),
            token: attempt.token.as_str().into(),
        };
        Try::Granted(Grant::new(fence, Arc::new(held), sent))
    }

    /// Runs the acquire script, on a dedicated connection followed by `WAIT` when replicas
    /// must acknowledge grants.
    async fn run_acquire(&self, attempt: &mut RedisAttempt) -> Result<Attempt> {
        let owner = Owner {
            token: &attempt.token,
            label: &attempt.label,
        };
        let waiting = attempt.queue_ttl.map_or(Waiting::No, |ttl| Waiting::Queue {
            ttl,
            // A grant that replicas must acknowledge is the acquirer's to wait for.
            handoff: self.replicas.is_none(),
        });
        let keys = &attempt.keys;
        let Some(replicas) = &self.replicas else {
            return self
                .node
                .acquire(keys, owner, attempt.lease, waiting, Fence::Take)
                .await;
        };
        let invocation = invocation::acquire(keys, owner, attempt.lease, waiting, Fence::Take);
        let node = &self.node;
        replicas
            .dedicated(&mut attempt.dedicated, async |connection| {
                let reply = replicas.run_on(connection, &invocation).await?;
                let outcome = read_attempt(reply, node.link().name())?;
                if !matches!(outcome, Attempt::Granted(_)) {
                    return Ok(outcome);
                }
                let Some(acknowledged) = replicas.shortfall(connection, keys.lock()).await? else {
                    return Ok(outcome);
                };
                let released = node.release(keys, owner.token).await.is_ok();
                Err(replicas.too_few(acknowledged, released))
            })
            .await
    }
}

#[async_trait]
impl LockSteps for Single {
    type Attempt = RedisAttempt;

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn server(&self) -> &str {
        self.node.link().name()
    }

    fn leases(&self) -> &Leases {
        &self.leases
    }

    /// A waiting acquisition on a server with inboxes registers in its service's inbox before
    /// its first try (no I/O), so a release right after that try reaches it.
    fn begin(&self, name: &LockName, options: &AcquireOptions) -> RedisAttempt {
        let queue_ttl = (options.wait != Some(Duration::ZERO)).then_some(self.waiter_ttl);
        let inbox = self.subscriber.inbox().filter(|_| queue_ttl.is_some());
        let token = inbox.map_or_else(new_token, |inbox| inbox.token());
        RedisAttempt {
            keys: LockKeys::new(&self.prefix, name),
            registration: inbox.map(|inbox| inbox.register(&token)),
            token,
            label: Arc::clone(&options.owner_label),
            lease: options.lease,
            queue_ttl,
            subscription: None,
            dedicated: None,
            busy_sent: None,
            handed: None,
        }
    }

    /// A release that granted this attempt the lock said so: it holds it at once, its lease
    /// counted from its last try. When that try is more than half a lease old (a long wait
    /// with a short lease), it tries instead, which keeps the grant at a fresh lease.
    async fn try_once(&self, attempt: &mut RedisAttempt) -> Result<Try> {
        let handed = attempt.handed.take();
        if let (Some(fence), Some(sent)) = (handed, attempt.busy_sent) {
            if sent.elapsed() < attempt.lease / 2 {
                return Ok(self.granted(attempt, fence, sent));
            }
        }
        let sent = Instant::now();
        let hint = match self.run_acquire(attempt).await? {
            Attempt::Granted(fence) => return Ok(self.granted(attempt, fence, sent)),
            Attempt::Held(hint) => hint,
        };
        attempt.busy_sent = Some(sent);
        // Registered in a live inbox: a release after this try reaches the waiter. Not
        // subscribed yet (a cluster): `wait` subscribes and returns, and the next try follows
        // at once, so a release between this try and the subscription is not missed.
        let pushed = match (&attempt.registration, &attempt.subscription) {
            (Some(registration), _) => registration.live(),
            (None, subscription) => subscription.as_ref().is_none_or(|s| s.live()),
        };
        // The fallback timer: the key's expiry (crashed holders, lost messages, plain `SET NX`
        // holders that never publish), and refreshing our place in the queue.
        let mut busy = Busy {
            recheck_within: None,
            pushed,
        }
        .within(self.waiter_ttl / 3);
        if let Some(hint) = hint {
            busy = busy.within(hint + Duration::from_millis(1));
        }
        Ok(Try::Busy(busy))
    }

    async fn wait(&self, attempt: &mut RedisAttempt, until: Deadline) {
        if let Some(registration) = attempt.registration.as_mut() {
            if let Some(inbox) = self.subscriber.inbox() {
                // The first wait of the service subscribes to its inbox (once, for good).
                self.subscriber.open_inbox(inbox);
            }
            attempt.handed = turn(registration, &attempt.token, until).await;
            return;
        }
        let Some(subscription) = attempt.subscription.as_mut() else {
            let timeout = self.node.link().timeout();
            let channel = attempt.keys.waiter_channel(&attempt.token);
            let subscribing = self.subscriber.subscribe(&channel, timeout);
            attempt.subscription = Some(subscribing.await);
            return;
        };
        attempt.handed = turn(subscription, &attempt.token, until).await;
    }

    /// Leaves the queue, so nobody waits for an entry that will not try again.
    async fn abandon(&self, attempt: &mut RedisAttempt) -> Result<()> {
        if attempt.queue_ttl.is_none() {
            return Ok(());
        }
        self.node
            .release(&attempt.keys, &attempt.token)
            .await
            .map(drop)
    }

    /// Deletes the key and the queue entry if they are this attempt's token's: on the
    /// connection a replicated acquire was in flight on (so Redis runs it after that script),
    /// else on the shared connection, where it queues behind anything already sent.
    async fn clean_up(&self, attempt: &mut RedisAttempt) -> Result<()> {
        if let (Some(mut connection), Some(replicas)) = (attempt.dedicated.take(), &self.replicas) {
            let release =
                invocation::release(&attempt.keys, &attempt.token, None, self.node.wake());
            let released: Result<(i64, i64)> = replicas.run_on(&mut connection, &release).await;
            if released.is_ok() {
                return Ok(());
            }
        }
        self.node
            .release(&attempt.keys, &attempt.token)
            .await
            .map(drop)
    }
}

/// Waits until a wake-up names `token` (a release made it first in line, or granted it the
/// lock: then the grant's fence) or says nothing of whom (a subscription made or lost: try
/// now), or `until` passes.
async fn turn(wakes: &mut Wakes, token: &str, until: Deadline) -> Option<u64> {
    loop {
        tokio::select! {
            wake = wakes.changed() => {
                let message = wake.next.as_deref().filter(|next| !next.is_empty())?;
                let (named, fence) = message.split_once(' ').unwrap_or((message, ""));
                if named == token {
                    return fence.parse().ok();
                }
            }
            () = until.sleep() => return None,
        }
    }
}
