//! Redlock: one lock over N independent masters, granted by a majority within the lease.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::join_all;
use lock_core::{
    AcquireOptions, Capabilities, DistributedLock, Error, ErrorKind, LockGuard, LockName, Result,
};
use tokio::time::Instant;

use crate::cleanup::ArmedCleanup;
use crate::config::RedisLockBuilder;
use crate::error::BACKEND;
use crate::keys::LockKeys;
use crate::node::{Attempt, Node};
use crate::redlock_held::{RedlockHeld, bounded, per_master_limit, release_all, until_decided};
use crate::token::new_token;

/// A Redlock over independent masters: a grant needs a majority of them within the lease.
///
/// Waiting polls with the options' jittered backoff (no pub/sub across masters). Each master
/// call in an acquire or renew round is bounded by the command timeout and by half of what the
/// lease leaves after the drift allowance, whichever is shorter, so a paused or dead minority
/// delays a round by at most that much and can never outlast the lease it is deciding about.
/// See the crate docs for what its fencing token guarantees.
#[derive(Clone, Debug)]
pub struct Redlock {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    nodes: Vec<Node>,
    prefix: String,
    drift_factor: f64,
}

/// What one round over all masters produced.
enum Round {
    Granted(LockGuard),
    Held(Option<Duration>),
}

impl Redlock {
    /// A builder for the masters in `urls` (comma-separated).
    pub fn builder(urls: &str) -> RedisLockBuilder {
        RedisLockBuilder::new(urls)
    }

    pub(crate) async fn connect_with(config: RedisLockBuilder) -> Result<Self> {
        if config.replicas.is_some() {
            return Err(Error::invalid_input(
                "wait_for_replicas applies to a single master; Redlock's masters are independent",
            ));
        }
        let connecting = config
            .urls
            .iter()
            .map(|url| Node::connect_or_lazy(config.target(url)));
        let mut nodes = Vec::with_capacity(config.urls.len());
        let mut reachable = 0;
        let mut last_error = None;
        for outcome in join_all(connecting).await {
            let (node, error) = outcome?;
            match error {
                None => reachable += 1,
                Some(error) => last_error = Some(error),
            }
            nodes.push(node);
        }
        if reachable < quorum(nodes.len()) {
            let error = Error::new(
                ErrorKind::Unavailable,
                format!(
                    "only {reachable} of {} Redis masters answered; Redlock needs {}",
                    nodes.len(),
                    quorum(nodes.len())
                ),
            );
            return Err(match last_error {
                Some(source) => error.with_source(source),
                None => error,
            });
        }
        Ok(Self {
            inner: Arc::new(Inner {
                nodes,
                prefix: config.key_prefix,
                drift_factor: config.clock_drift_factor,
            }),
        })
    }

    /// The drift allowance for `lease`: `lease * factor + 2 ms`.
    fn drift(&self, lease: Duration) -> Duration {
        lease.mul_f64(self.inner.drift_factor) + Duration::from_millis(2)
    }

    /// One round: the acquire script on every master at once, then the verdict.
    async fn round(
        &self,
        name: &LockName,
        keys: &LockKeys,
        options: &AcquireOptions,
    ) -> Result<Round> {
        let nodes = &self.inner.nodes;
        let quorum = quorum(nodes.len());
        let token = new_token();
        let lease = options.lease;
        let drift = self.drift(lease);
        let limit = per_master_limit(nodes, lease, drift);
        let start = Instant::now();
        let cleanup = ArmedCleanup::arm(nodes, keys, &token);
        let against = nodes.len() - quorum;
        let token_ref = token.as_str();
        let calls = nodes.iter().map(|node| async move {
            (
                node,
                bounded(limit, node.acquire(keys, token_ref, lease, None)).await,
            )
        });
        let replies = until_decided(calls, |replies| {
            let granted = replies
                .iter()
                .filter(|(_, reply)| matches!(reply, Ok(Attempt::Granted(_))))
                .count();
            granted >= quorum || replies.len() - granted > against
        })
        .await;
        let (mut granted, mut longest_pttl, mut failures) =
            (Vec::new(), Some(Duration::ZERO), Vec::new());
        for (node, reply) in replies {
            match reply {
                Ok(Attempt::Granted(fence)) => granted.push((node, fence)),
                Ok(Attempt::Held(pttl)) => {
                    longest_pttl = longest_pttl.zip(pttl).map(|(a, b)| a.max(b))
                }
                Err(error) => failures.push(error),
            }
        }
        if granted.len() >= quorum {
            // Lift every granting master's counter to the token handed out, so any later
            // majority (which shares a master with this one) counts past it.
            let fence = granted.iter().map(|(_, fence)| *fence).max().unwrap_or(0);
            let raised = join_all(granted.iter().map(|(node, own)| async move {
                if *own == fence {
                    Ok(())
                } else {
                    bounded(limit, node.raise_fence(keys, fence)).await
                }
            }))
            .await;
            let kept = raised.iter().filter(|outcome| outcome.is_ok()).count();
            if kept >= quorum && start.elapsed() + drift < lease {
                let held = RedlockHeld::new(nodes.clone(), keys.clone(), token, drift);
                let guard = LockGuard::builder(name.clone(), fence, Arc::new(held))
                    .backend(BACKEND)
                    .lease(
                        start.checked_sub(drift).unwrap_or(start),
                        lease,
                        options.auto_renew,
                    )
                    .build();
                cleanup.disarm();
                return Ok(Round::Granted(guard));
            }
        }
        release_all(nodes, keys, &token).await;
        cleanup.disarm();
        let answered = nodes.len() - failures.len();
        if answered < quorum {
            let error = Error::new(
                ErrorKind::Unavailable,
                format!(
                    "only {answered} of {} Redis masters answered; Redlock needs {quorum} \
                     (the partial grant was released on every master that answers)",
                    nodes.len()
                ),
            );
            return Err(match failures.pop() {
                Some(source) => error.with_source(source),
                None => error,
            });
        }
        Ok(Round::Held(longest_pttl))
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
        options.validate()?;
        let context = |error: Error| {
            error
                .with_backend(BACKEND)
                .with_operation("acquire")
                .with_lock(name)
        };
        let keys = LockKeys::new(&self.inner.prefix, name);
        let deadline = options.wait.map(|wait| Instant::now() + wait);
        let mut attempt = 0;
        loop {
            let pttl = match self.round(name, &keys, options).await.map_err(context)? {
                Round::Granted(guard) => return Ok(Some(guard)),
                Round::Held(pttl) => pttl,
            };
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return Ok(None);
            }
            let mut sleep = options.backoff.delay(attempt);
            attempt += 1;
            if let Some(pttl) = pttl.filter(|pttl| !pttl.is_zero()) {
                sleep = sleep.min(pttl + Duration::from_millis(1));
            }
            if let Some(deadline) = deadline {
                sleep = sleep.min(deadline - now);
            }
            tokio::time::sleep(sleep).await;
        }
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
}
