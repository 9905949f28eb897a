//! Redlock's steps: one round of the acquire script on every master, decided by a majority.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use lock_core::backend::{Busy, Grant, LockSteps, Try};
use lock_core::{AcquireOptions, Error, ErrorKind, LockName, Result, async_trait};
use tokio::time::Instant;

use crate::error::BACKEND;
use crate::keys::LockKeys;
use crate::node::{Attempt, Node};
use crate::redlock::quorum;
use crate::redlock_held::{RedlockHeld, bounded, per_master_limit, release_all, until_decided};
use crate::token::new_token;

/// The masters, shared by a service's clones.
#[derive(Debug)]
pub(crate) struct Masters {
    nodes: Vec<Node>,
    prefix: String,
    /// The masters' names, for error context.
    names: String,
}

impl Masters {
    pub(crate) fn new(nodes: Vec<Node>, prefix: String) -> Self {
        let names: Vec<&str> = nodes.iter().map(|node| node.link().name()).collect();
        let names = names.join(",");
        Self {
            nodes,
            prefix,
            names,
        }
    }
}

/// One acquisition: the keys, the lease and its drift allowance, and the token of the round
/// in flight (every round has its own, so a late answer of one round cannot count for
/// another).
#[derive(Debug)]
pub(crate) struct RedlockAttempt {
    keys: LockKeys,
    lease: Duration,
    drift: Duration,
    token: String,
}

#[async_trait]
impl LockSteps for Masters {
    type Attempt = RedlockAttempt;

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn server(&self) -> &str {
        &self.names
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> RedlockAttempt {
        RedlockAttempt {
            keys: LockKeys::new(&self.prefix, name),
            lease: options.lease,
            // Redlock's allowance: the drift share of the lease plus 2 ms for the masters'
            // own timer resolution.
            drift: options.drift_margin(options.lease) + Duration::from_millis(2),
            token: String::new(),
        }
    }

    /// One round: the acquire script on every master at once, then the verdict.
    async fn try_once(&self, attempt: &mut RedlockAttempt) -> Result<Try> {
        let nodes = &self.nodes;
        let quorum = quorum(nodes.len());
        attempt.token = new_token();
        let RedlockAttempt {
            keys,
            lease,
            drift,
            token,
        } = &*attempt;
        let limit = per_master_limit(nodes, *lease, *drift);
        let start = Instant::now();
        let against = nodes.len() - quorum;
        let calls = nodes.iter().map(|node| async move {
            (
                node,
                bounded(limit, node.acquire(keys, token, *lease, None)).await,
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
                    longest_pttl = longest_pttl.zip(pttl).map(|(a, b)| a.max(b));
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
            if kept >= quorum && start.elapsed() + *drift < *lease {
                let held = RedlockHeld::new(nodes.clone(), keys.clone(), token.clone(), *drift);
                return Ok(Try::Granted(Grant::new(fence, Arc::new(held), start)));
            }
        }
        release_all(nodes, keys, token).await;
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
        let busy = Busy::polled();
        Ok(Try::Busy(
            match longest_pttl.filter(|pttl| !pttl.is_zero()) {
                Some(pttl) => busy.within(pttl + Duration::from_millis(1)),
                None => busy,
            },
        ))
    }

    /// Compare-and-deletes the round's token on every master (failures are left to the lease).
    async fn clean_up(&self, attempt: &mut RedlockAttempt) -> Result<()> {
        release_all(&self.nodes, &attempt.keys, &attempt.token).await;
        Ok(())
    }

    fn needs_cleanup(&self, attempt: &RedlockAttempt) -> bool {
        !attempt.token.is_empty()
    }
}
