//! The server side of a Redlock hold: release on every master, renew on a majority.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use futures_util::future::join_all;
use futures_util::stream::FuturesUnordered;
use lock_core::backend::{HeldLock, Sending};
use lock_core::{Error, ErrorKind, Result};

use crate::keys::LockKeys;
use crate::node::Node;
use crate::redlock::quorum;

/// A Redlock hold: the same key and token on every master.
#[derive(Debug)]
pub(crate) struct RedlockHeld {
    nodes: Vec<Node>,
    keys: LockKeys,
    token: String,
    drift: Duration,
}

impl RedlockHeld {
    pub(crate) fn new(nodes: Vec<Node>, keys: LockKeys, token: String, drift: Duration) -> Self {
        Self {
            nodes,
            keys,
            token,
            drift,
        }
    }
}

#[async_trait]
impl HeldLock for RedlockHeld {
    async fn release(&self) -> Result<bool> {
        let answers = join_all(
            self.nodes
                .iter()
                .map(|node| async { node.release(&self.keys, &self.token).await }),
        )
        .await;
        verdict(self.nodes.len(), answers, "release")
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        self.renew_sent(lease, Sending::Gathered).await
    }

    async fn extend(&self, lease: Duration) -> Result<bool> {
        self.renew_sent(lease, Sending::AtOnce).await
    }
}

impl RedlockHeld {
    /// Renews on every master, each renewal sent as `sending` says, until a majority decides.
    async fn renew_sent(&self, lease: Duration, sending: Sending) -> Result<bool> {
        let limit = per_master_limit(&self.nodes, lease, self.drift);
        // Ask for the drift allowance on top, so the servers' lease outlasts the local one.
        let asked = lease + self.drift;
        let (lock, token) = (self.keys.lock(), &self.token);
        let calls = self
            .nodes
            .iter()
            .map(|node| bounded(limit, node.renew(lock, token, asked, sending)));
        let quorum = quorum(self.nodes.len());
        let against = self.nodes.len() - quorum;
        let answers = until_decided(calls, |answers| {
            let yes = answers.iter().filter(|a| matches!(a, Ok(true))).count();
            let no = answers.iter().filter(|a| !matches!(a, Ok(true))).count();
            yes >= quorum || no > against
        })
        .await;
        verdict(self.nodes.len(), answers, "renew")
    }
}

/// Turns the answers of `masters` masters into one: `true` with a majority of `true`, `false`
/// once a majority can no longer say `true`, otherwise the error of a master that failed.
pub(crate) fn verdict(
    masters: usize,
    answers: Vec<Result<bool>>,
    operation: &'static str,
) -> Result<bool> {
    let quorum = quorum(masters);
    let yes = answers.iter().filter(|a| matches!(a, Ok(true))).count();
    let no = answers.iter().filter(|a| matches!(a, Ok(false))).count();
    if yes >= quorum {
        return Ok(true);
    }
    if no > masters - quorum {
        return Ok(false);
    }
    let source = answers.into_iter().find_map(Result::err);
    let error = Error::new(
        ErrorKind::Unavailable,
        format!(
            "{operation}: only {} of {masters} Redis masters answered; Redlock needs {quorum}",
            yes + no,
        ),
    )
    .with_operation(operation);
    Err(match source {
        Some(source) => error.with_source(source),
        None => error,
    })
}

/// Compare-and-deletes `token`'s hold on every master, and drops the waiting count of
/// `poller`, ignoring failures (leases and the counts' expiry end those).
pub(crate) async fn release_all(
    nodes: &[Node],
    keys: &LockKeys,
    token: &str,
    poller: Option<&str>,
) {
    let releases = nodes
        .iter()
        .map(|node| node.release_counted(keys, token, poller));
    for outcome in join_all(releases).await {
        if let Err(error) = outcome {
            tracing::debug!(%error, "Redlock release on one master failed; its lease ends it");
        }
    }
}

/// How long one master may take to answer in a round (acquire or renew) for `lease`: the
/// command timeout, but never more than half of what the lease leaves after the drift
/// allowance. The Redlock algorithm asks for per-master timeouts small against the lease: a
/// paused or dead minority must not stall a round past the point where its grant or renewal is
/// still worth having, while the answering majority decides.
pub(crate) fn per_master_limit(nodes: &[Node], lease: Duration, drift: Duration) -> Duration {
    let command_timeout = nodes.first().map_or(lease, |node| node.link().timeout());
    command_timeout
        .min(lease.saturating_sub(drift) / 2)
        .max(Duration::from_millis(1))
}

/// Runs `call` on one master, failing it as `Unavailable` once `limit` has passed.
pub(crate) async fn bounded<T>(
    limit: Duration,
    call: impl Future<Output = Result<T>>,
) -> Result<T> {
    match lock_core::backend::timeout(limit, call).await {
        Ok(answer) => answer,
        Err(_) => Err(Error::new(
            ErrorKind::Unavailable,
            format!(
                "a Redis master did not answer within {limit:?}, the per-master limit for this lease"
            ),
        )),
    }
}

/// Runs `calls` (one per master) at once and returns the answers as soon as `decided` says the
/// answers so far settle the round, or when every master has answered. A majority decides, so
/// a slow minority is not waited for; its calls are dropped (a dropped call may still run on
/// that master, which the hold's own release and lease cover).
pub(crate) async fn until_decided<F: Future>(
    calls: impl IntoIterator<Item = F>,
    decided: impl Fn(&[F::Output]) -> bool,
) -> Vec<F::Output> {
    let mut pending: FuturesUnordered<F> = calls.into_iter().collect();
    let mut answers = Vec::with_capacity(pending.len());
    while let Some(answer) = pending.next().await {
        answers.push(answer);
        if decided(&answers) {
            break;
        }
    }
    answers
}
