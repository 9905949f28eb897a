//! The steps of a semaphore or read-write acquisition on a single master: the claim script, a
//! place in the object's queue, pub/sub wake-ups on its channel, and replica acknowledgement
//! on a connection of its own.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{Busy, Deadline, Grant, HeldLock, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, Claim, LockName, Result, async_trait};
use tokio::time::Instant;

use crate::claim_scripts::{
    ClaimAttempt, ClaimRequest, acquire_invocation, read_claim_attempt, release_invocation,
};
use crate::connection::Connection;
use crate::error::BACKEND;
use crate::keys::{ClaimKeys, ClaimObject};
use crate::node::Node;
use crate::steps::Single;
use crate::subscriber::Subscription;
use crate::token::new_token;

/// The steps of acquisitions of one claim; made per acquisition (the claim is its state).
#[derive(Debug)]
pub(crate) struct ClaimSteps {
    pub(crate) single: Arc<Single>,
    pub(crate) claim: Claim,
    /// Which object of the name `claim` is taken on (an election takes `Claim::Write`).
    pub(crate) object: ClaimObject,
}

/// One acquisition: its keys, token and label, its queue ttl (`None`: a single try), and its
/// subscription once it waits.
#[derive(Debug)]
pub(crate) struct RedisClaimAttempt {
    keys: ClaimKeys,
    token: String,
    label: Arc<str>,
    lease: Duration,
    queue_ttl: Option<Duration>,
    subscription: Option<Subscription>,
    /// The dedicated connection of a replicated acquire in flight.
    dedicated: Option<Connection>,
}

/// The object of a name that `claim` is taken on outside elections.
pub(crate) fn claim_object(claim: Claim) -> ClaimObject {
    match claim {
        Claim::Permit { .. } => ClaimObject::Semaphore,
        _ => ClaimObject::ReadWrite,
    }
}

impl ClaimSteps {
    /// Runs the claim acquire script, on a dedicated connection followed by `WAIT` when
    /// replicas must acknowledge grants (a grant too few acknowledged is released again and
    /// reported as `Unavailable`).
    async fn run_acquire(&self, attempt: &mut RedisClaimAttempt) -> Result<ClaimAttempt> {
        let request = ClaimRequest {
            token: &attempt.token,
            label: &attempt.label,
            claim: self.claim,
            lease: attempt.lease,
            queue: attempt.queue_ttl,
        };
        let (node, keys) = (&self.single.node, &attempt.keys);
        let Some(replicas) = &self.single.replicas else {
            return node.acquire_claim(keys, request).await;
        };
        let invocation = acquire_invocation(keys, request, node.link().channels());
        replicas
            .dedicated(&mut attempt.dedicated, async |connection| {
                let reply = replicas.run_on(connection, &invocation).await?;
                let outcome = read_claim_attempt(reply, node.link().name())?;
                if !matches!(outcome, ClaimAttempt::Granted(_)) {
                    return Ok(outcome);
                }
                let Some(acknowledged) = replicas.shortfall(connection, &keys.holders).await?
                else {
                    return Ok(outcome);
                };
                let released = node.release_claim(keys, request.token).await.is_ok();
                Err(replicas.too_few(acknowledged, released))
            })
            .await
    }
}

#[async_trait]
impl LockSteps for ClaimSteps {
    type Attempt = RedisClaimAttempt;

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn server(&self) -> &str {
        self.single.node.link().name()
    }

    fn leases(&self) -> &Leases {
        &self.single.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> RedisClaimAttempt {
        RedisClaimAttempt {
            keys: ClaimKeys::new(&self.single.prefix, name, self.object),
            token: new_token(),
            label: Arc::clone(&options.owner_label),
            lease: options.lease,
            queue_ttl: (options.wait != Some(Duration::ZERO)).then_some(self.single.waiter_ttl),
            subscription: None,
            dedicated: None,
        }
    }

    async fn try_once(&self, attempt: &mut RedisClaimAttempt) -> Result<Try> {
        let sent = Instant::now();
        let hint = match self.run_acquire(attempt).await? {
            ClaimAttempt::Granted(fence) => {
                let held = ClaimHeld {
                    node: self.single.node.clone(),
                    keys: attempt.keys.clone(),
                    token: attempt.token.clone(),
                };
                return Ok(Try::Granted(Grant::new(fence, Arc::new(held), sent)));
            }
            ClaimAttempt::OtherLimit(held) => {
                let Claim::Permit { max_permits } = self.claim else {
                    return Err(lock_core::Error::invalid_input(
                        "a limit on a read-write lock",
                    ));
                };
                return Err(Claim::mismatched_permits(max_permits, held));
            }
            ClaimAttempt::Waiting(hint) => hint,
        };
        // Not subscribed yet: `wait` subscribes and returns, and the next try follows at once,
        // so a release between this try and the subscription is not missed.
        let pushed = attempt.subscription.as_ref().is_none_or(|s| s.live());
        // The fallback timer: a holder's lease end, and refreshing our place in the queue.
        let mut busy = Busy {
            recheck_within: None,
            pushed,
        }
        .within(self.single.waiter_ttl / 3);
        if let Some(hint) = hint {
            busy = busy.within(hint + Duration::from_millis(1));
        }
        Ok(Try::Busy(busy))
    }

    async fn wait(&self, attempt: &mut RedisClaimAttempt, until: Deadline) {
        let Some(subscription) = attempt.subscription.as_mut() else {
            let timeout = self.single.node.link().timeout();
            let subscribing = self
                .single
                .subscriber
                .subscribe(&attempt.keys.channel, timeout);
            attempt.subscription = Some(subscribing.await);
            return;
        };
        tokio::select! {
            _ = subscription.changed() => {}
            () = until.sleep() => {}
        }
    }

    /// Leaves the queue, so readers and permits behind us are not held up by a waiter that
    /// gave up.
    async fn abandon(&self, attempt: &mut RedisClaimAttempt) -> Result<()> {
        if attempt.queue_ttl.is_none() {
            return Ok(());
        }
        let node = &self.single.node;
        node.release_claim(&attempt.keys, &attempt.token)
            .await
            .map(drop)
    }

    /// Drops the hold and the queue entry if they are this attempt's token's: on the
    /// connection a replicated acquire was in flight on (so Redis runs it after that script),
    /// else on the shared connection.
    async fn clean_up(&self, attempt: &mut RedisClaimAttempt) -> Result<()> {
        let in_flight = attempt.dedicated.take();
        if let (Some(mut connection), Some(replicas)) = (in_flight, &self.single.replicas) {
            let channels = self.single.node.link().channels();
            let release = release_invocation(&attempt.keys, &attempt.token, channels);
            let released: Result<i64> = replicas.run_on(&mut connection, &release).await;
            if released.is_ok() {
                return Ok(());
            }
        }
        let node = &self.single.node;
        node.release_claim(&attempt.keys, &attempt.token)
            .await
            .map(drop)
    }
}

/// A permit, read-write hold or leadership on one master: the object's keys and the
/// holder's token.
#[derive(Debug)]
struct ClaimHeld {
    node: Node,
    keys: ClaimKeys,
    token: String,
}

#[async_trait]
impl HeldLock for ClaimHeld {
    async fn release(&self) -> Result<bool> {
        let released = self.node.release_claim(&self.keys, &self.token).await;
        released.map_err(|error| error.with_operation("release"))
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        let renewed = self.node.renew_claim(&self.keys, &self.token, lease).await;
        renewed.map_err(|error| error.with_operation("renew"))
    }

    async fn relabel(&self, label: &str) -> Result<bool> {
        let relabeled = self
            .node
            .relabel_claim(&self.keys, &self.token, label)
            .await;
        relabeled.map_err(|error| error.with_operation("proclaim"))
    }
}
