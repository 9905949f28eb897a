//! Redlock: one lock over N independent masters, granted by a majority within the lease.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::future::join_all;
use lock_core::{
    AcquireOptions, Capabilities, Claim, DistributedLock, Error, ErrorKind, LockGuard, LockName,
    LockStatus, Result,
};

use crate::builder::RedisLockBuilder;
use crate::error::BACKEND;
use crate::link::Link;
use crate::node::Node;
use crate::redlock_steps::Masters;
use crate::settings::Settings;

/// A Redlock over independent masters: a grant needs a majority of them within the lease.
///
/// Waiting polls with the options' jittered backoff (no pub/sub across masters). Each master
/// call in an acquire or renew round is bounded by the operation timeout and by half of what
/// the lease leaves after the drift allowance, whichever is shorter, so a paused or dead
/// minority delays a round by at most that much and can never outlast the lease it is
/// deciding about. See the crate docs for what its fencing token guarantees.
#[derive(Clone, Debug)]
pub struct Redlock {
    steps: Arc<Masters>,
    defaults: AcquireOptions,
}

impl Redlock {
    /// A builder for the masters `url` names: one URL with several hosts
    /// (`redis://a:6379,b:6379,c:6379`), or several URLs joined by commas.
    pub fn builder(url: &str) -> RedisLockBuilder<Self> {
        RedisLockBuilder::new(url)
    }

    pub(crate) async fn connect_with(settings: Settings) -> Result<Self> {
        let service = &settings.service;
        let nodes: Vec<Node> = settings
            .servers
            .into_iter()
            .map(|server| {
                Node::new(Link::new(
                    server,
                    service.connect_timeout,
                    service.operation_timeout,
                ))
            })
            .collect();
        let connected = join_all(nodes.iter().map(|node| node.link().connect())).await;
        let reachable = connected.iter().filter(|outcome| outcome.is_ok()).count();
        let quorum = quorum(nodes.len());
        if reachable < quorum {
            let error = Error::new(
                ErrorKind::Unavailable,
                format!(
                    "only {reachable} of {} Redis masters answered; Redlock needs {quorum}",
                    nodes.len()
                ),
            );
            return Err(match connected.into_iter().find_map(Result::err) {
                Some(source) => error.with_source(source),
                None => error,
            });
        }
        for (node, connected) in nodes.iter().zip(&connected) {
            if connected.is_ok() {
                crate::eviction::check(node.link(), settings.allow_eviction).await?;
            }
        }
        Ok(Self {
            steps: Arc::new(Masters::new(nodes, settings.prefix, settings.waiter_ttl)),
            defaults: settings.service.defaults,
        })
    }
}

/// The majority of `n` masters.
pub(crate) fn quorum(n: usize) -> usize {
    n / 2 + 1
}

#[async_trait]
impl DistributedLock for Redlock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        lock_core::backend::acquire(&self.steps, name, options).await
    }

    /// Refused: a Redlock offers the mutex only.
    ///
    /// A majority of semaphore grants does not bound the holders: over masters 1, 2, 3 with 2
    /// permits, holders on {1, 2}, {2, 3} and {1, 3} each leave every master at 2 holders,
    /// yet 3 hold. A read-write lock keeps its exclusion across majorities (any two share a
    /// master), but the rule that a waiting writer holds back new readers needs one arrival
    /// order, and independent masters each have their own; without it writers starve. Use a
    /// single master (with `wait_for_replicas` for failover safety) for these primitives.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is sent.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for an invalid claim, otherwise `Unsupported`, with the reason.
    async fn acquire_claim_with(
        &self,
        name: &LockName,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let _ = (name, options);
        claim.validate()?;
        let primitive = match claim {
            Claim::Permit { .. } => "semaphores",
            _ => "read-write locks",
        };
        Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "a Redlock offers no {primitive}: a majority of grants over independent masters cannot \
                 bound a semaphore's holders or keep a read-write lock's waiters in one order; \
                 use a single master, with wait_for_replicas for failover safety"
            ),
        )
        .with_backend(BACKEND))
    }

    /// Asks every master; reports a holder only when a majority shows the same owner (see
    /// the crate docs for how its token, lease left and grant time are chosen). Waiters: the
    /// most any master counts (every waiting acquisition is counted on each master it polls).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// `Unavailable` when fewer than a majority of masters answer within the operation
    /// timeout.
    async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        self.steps.status(name).await
    }

    /// The names held on a majority of masters (`SCAN` on each).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// `Unavailable` when fewer than a majority of masters answer every `SCAN`.
    async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        self.steps.held_names(prefix).await
    }

    /// Runs the token-checked force release on every master: `true` when it released on a
    /// majority, `false` when a majority no longer holds that token.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: each master runs its script whole or not at all; a master it did not
    /// reach keeps the hold until its lease ends, which a minority cannot use.
    ///
    /// # Errors
    ///
    /// `Unavailable` when too few masters answered to tell.
    async fn force_release(&self, name: &LockName, fencing_token: u64) -> Result<bool> {
        self.steps.force_release(name, fencing_token).await
    }

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .with_fencing()
            .with_lost_detection()
            .with_lease_renewal()
    }

    fn default_options(&self) -> AcquireOptions {
        self.defaults.clone()
    }

    fn service_identity(&self) -> usize {
        Arc::as_ptr(&self.steps) as usize
    }
}
