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
use crate::invocation::{self, Fence, Owner, Waiting};
use crate::keys::LockKeys;
use crate::node::{Attempt, Node, read_attempt};
use crate::replicas::Replicas;
use crate::subscriber::{Subscriber, Subscription};
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
/// queue; a single try only checks that nobody queued first), its subscription once it
/// waits, and the dedicated connection of a replicated acquire in flight.
#[derive(Debug)]
pub(crate) struct RedisAttempt {
    keys: LockKeys,
    token: String,
    label: Arc<str>,
    lease: Duration,
    queue_ttl: Option<Duration>,
    subscription: Option<Subscription>,
    dedicated: Option<Connection>,
}

impl Single {
    /// Runs the acquire script, on a dedicated connection followed by `WAIT` when replicas
    /// must acknowledge grants.
    async fn run_acquire(&self, attempt: &mut RedisAttempt) -> Result<Attempt> {
        let owner = Owner {
            token: &attempt.token,
            label: &attempt.label,
        };
        let waiting = attempt.queue_ttl.map_or(Waiting::No, Waiting::Queue);
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
                let Some(acknowledged) = replicas.shortfall(connection, &keys.lock).await? else {
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

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> RedisAttempt {
        RedisAttempt {
            keys: LockKeys::new(&self.prefix, name),
            token: new_token(),
            label: Arc::clone(&options.owner_label),
            lease: options.lease,
            queue_ttl: (options.wait != Some(Duration::ZERO)).then_some(self.waiter_ttl),
            subscription: None,
            dedicated: None,
        }
    }

    async fn try_once(&self, attempt: &mut RedisAttempt) -> Result<Try> {
        let sent = Instant::now();
        let hint = match self.run_acquire(attempt).await? {
            Attempt::Granted(fence) => {
                let held = SingleHeld {
                    node: self.node.clone(),
                    lock: attempt.keys.lock.as_str().into(),
                    token: attempt.token.as_str().into(),
                };
                return Ok(Try::Granted(Grant::new(fence, Arc::new(held), sent)));
            }
            Attempt::Held(hint) => hint,
        };
        // Not subscribed yet: `wait` subscribes and returns, and the next try follows at once,
        // so a release between this try and the subscription is not missed.
        let pushed = attempt.subscription.as_ref().is_none_or(Subscription::live);
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
        let Some(subscription) = attempt.subscription.as_mut() else {
            let timeout = self.node.link().timeout();
            let channel = attempt.keys.waiter_channel(&attempt.token);
            let subscribing = self.subscriber.subscribe(&channel, timeout);
            attempt.subscription = Some(subscribing.await);
            return;
        };
        loop {
            tokio::select! {
                wake = subscription.changed() => {
                    // A release wakes the first queued waiter alone, on its own channel,
                    // naming it; `None` (a subscription made or lost) means try now.
                    let next = wake.next.as_deref();
                    if next.is_none_or(|next| next.is_empty() || next == attempt.token) {
                        return;
                    }
                }
                () = until.sleep() => return,
            }
        }
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
            let channels = self.node.link().channels();
            let release = invocation::release(&attempt.keys, &attempt.token, None, channels);
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
