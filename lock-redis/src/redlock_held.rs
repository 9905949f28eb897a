//! The server side of a Redlock hold: release on every master, renew on a majority.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::join_all;
use lock_core::{Error, ErrorKind, HeldLock, Result};

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

    /// Turns per-master answers into one: `true` with a majority of `true`, `false` once a
    /// majority can no longer say `true`, otherwise the error of a master that failed.
    fn verdict(&self, answers: Vec<Result<bool>>, operation: &'static str) -> Result<bool> {
        let quorum = quorum(self.nodes.len());
        let yes = answers.iter().filter(|a| matches!(a, Ok(true))).count();
        let no = answers.iter().filter(|a| matches!(a, Ok(false))).count();
        if yes >= quorum {
            return Ok(true);
        }
        if no > self.nodes.len() - quorum {
            return Ok(false);
        }
        let source = answers.into_iter().find_map(Result::err);
        let error = Error::new(
            ErrorKind::Unavailable,
            format!(
                "{operation}: only {} of {} Redis masters answered; Redlock needs {quorum}",
                yes + no,
                self.nodes.len()
            ),
        )
        .with_operation(operation);
        Err(match source {
            Some(source) => error.with_source(source),
            None => error,
        })
    }
}

#[async_trait]
impl HeldLock for RedlockHeld {
    async fn release(&self) -> Result<bool> {
        let answers = join_all(self.nodes.iter().map(|node| async {
            node.release(&self.keys, &self.token)
                .await
                .map(|r| r.is_some())
        }))
        .await;
        self.verdict(answers, "release")
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        // Ask for the drift allowance on top, so the servers' lease outlasts the local one.
        let lease = lease + self.drift;
        let answers = join_all(
            self.nodes
                .iter()
                .map(|node| node.renew(&self.keys, &self.token, lease)),
        )
        .await;
        self.verdict(answers, "renew")
    }
}

/// Compare-and-deletes `token`'s hold on every master, ignoring failures (leases end those).
pub(crate) async fn release_all(nodes: &[Node], keys: &LockKeys, token: &str) {
    let releases = nodes.iter().map(|node| node.release(keys, token));
    for outcome in join_all(releases).await {
        if let Err(error) = outcome {
            tracing::debug!(%error, "Redlock release on one master failed; its lease ends it");
        }
    }
}
