//! Redlock's steps: one round of the acquire script on every master, decided by a majority.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{Busy, Grant, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, Error, ErrorKind, LockName, Result, async_trait};
use tokio::time::Instant;

use crate::error::BACKEND;
use crate::invocation::{Fence, Owner, Waiting};
use crate::keys::LockKeys;
use crate::node::{Attempt, Node};
use crate::redlock::quorum;
use crate::redlock_held::{RedlockHeld, bounded, per_master_limit, release_all, until_decided};
use crate::redlock_settle::settle;
use crate::token::new_token;

/// The masters, shared by a service's clones.
#[derive(Debug)]
pub(crate) struct Masters {
    pub(crate) nodes: Vec<Node>,
    pub(crate) prefix: String,
    /// How long a waiting acquisition stays counted on a master without a new round.
    waiter_ttl: Duration,
    /// The masters' names, for error context.
    names: String,
    leases: Leases,
}

impl Masters {
    pub(crate) fn new(nodes: Vec<Node>, prefix: String, waiter_ttl: Duration) -> Self {
        let names: Vec<&str> = nodes.iter().map(|node| node.link().name()).collect();
        let names = names.join(",");
        Self {
            nodes,
            prefix,
            waiter_ttl,
            names,
            leases: Leases::default(),
        }
    }
}

/// One acquisition: the keys, owner label, lease and its drift allowance, and the token of the
/// round in flight (every round has its own, so a late answer of one round cannot count for
/// another). A waiting acquisition also has a poller id of its own, under which the masters
/// count it as waiting (for `inspect`) between rounds; `counted` once a round may have done so.
#[derive(Debug)]
pub(crate) struct RedlockAttempt {
    keys: LockKeys,
    label: Arc<str>,
    lease: Duration,
    drift: Duration,
    token: String,
    poller: Option<String>,
    counted: bool,
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

    fn leases(&self) -> &Leases {
        &self.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> RedlockAttempt {
        RedlockAttempt {
            keys: LockKeys::new(&self.prefix, name),
            label: Arc::clone(&options.owner_label),
            lease: options.lease,
            // Redlock's allowance: the drift share of the lease plus 2 ms for the masters'
            // own timer resolution.
            drift: options.drift_margin(options.lease) + Duration::from_millis(2),
            token: String::new(),
            poller: (options.wait != Some(Duration::ZERO)).then(new_token),
            counted: false,
        }
    }

    /// One round: the acquire script on every master at once, then the verdict.
    async fn try_once(&self, attempt: &mut RedlockAttempt) -> Result<Try> {
        let nodes = &self.nodes;
        let quorum = quorum(nodes.len());
        attempt.token = new_token();
        let RedlockAttempt {
            keys,
            label,
            lease,
            drift,
            token,
            poller,
            counted,
        } = &*attempt;
        let owner = Owner { token, label };
        let waiting = poller.as_deref().map_or(Waiting::No, |id| Waiting::Poll {
            id,
            ttl: self.waiter_ttl,
            counted: *counted,
        });
        let limit = per_master_limit(nodes, *lease, *drift);
        let start = Instant::now();
        let against = nodes.len() - quorum;
        let calls = nodes.iter().map(|node| async move {
            let reply = node.acquire(keys, owner, *lease, waiting, Fence::Propose);
            (node, bounded(limit, reply).await)
        });
        let replies = until_decided(calls, |replies| {
            let granted = replies
                .iter()
                .filter(|(_, reply)| matches!(reply, Ok(Attempt::Granted(_))))
                .count();
            granted >= quorum || replies.len() - granted > against
        })
        .await;
        let (mut granted, mut held, mut longest_pttl, mut failures) =
            (Vec::new(), Vec::new(), Some(Duration::ZERO), Vec::new());
        for (node, reply) in replies {
            match reply {
                Ok(Attempt::Granted(fence)) => granted.push((node, fence)),
                Ok(Attempt::Held(pttl)) => {
                    held.push(node);
                    longest_pttl = longest_pttl.zip(pttl).map(|(a, b)| a.max(b));
                }
                Err(error) => failures.push(error),
            }
        }
        if granted.len() >= quorum {
            let (fence, kept) = settle(&granted, &held, keys, poller.as_deref(), limit).await;
            if kept >= quorum && start.elapsed() + *drift < *lease {
                let held = RedlockHeld::new(nodes.clone(), keys.clone(), token.clone(), *drift);
                return Ok(Try::Granted(Grant::new(fence, Arc::new(held), start)));
            }
        }
        release_all(nodes, keys, token, None).await;
        attempt.counted = attempt.poller.is_some();
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
        let mut busy = Busy::polled();
        if let Some(pttl) = longest_pttl.filter(|pttl| !pttl.is_zero()) {
            busy = busy.within(pttl + Duration::from_millis(1));
        }
        if attempt.counted {
            // The next round refreshes this acquisition's count before it expires.
            busy = busy.within(self.waiter_ttl / 3);
        }
        Ok(Try::Busy(busy))
    }

    /// Drops the acquisition's waiting count on every master (a single try has none; the
    /// last round's grants were released when it failed).
    async fn abandon(&self, attempt: &mut RedlockAttempt) -> Result<()> {
        if attempt.poller.is_none() {
            return Ok(());
        }
        self.clean_up(attempt).await
    }

    /// Compare-and-deletes the round's token and drops the waiting count on every master
    /// (failures are left to the lease and the count's expiry).
    async fn clean_up(&self, attempt: &mut RedlockAttempt) -> Result<()> {
        let poller = attempt.poller.as_deref();
        release_all(&self.nodes, &attempt.keys, &attempt.token, poller).await;
        Ok(())
    }

    fn needs_cleanup(&self, attempt: &RedlockAttempt) -> bool {
        !attempt.token.is_empty()
    }
}
