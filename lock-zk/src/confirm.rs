//! Confirming holds: a session's holds renewing together are confirmed by one read of all
//! their nodes.
//!
//! A ZooKeeper hold lives as long as its session and its node, so confirming a hold means
//! proving two things:
//! - the ensemble heard from the session recently: any answer to a request of ours does (watch
//!   notifications do not: they can arrive over a link that no longer carries our requests);
//! - the hold's node is still there and still ours: nobody (an operator's force release)
//!   deleted it behind our back.
//!
//! Confirmations asked for close together are [gathered](Gather) and sent after every one of
//! them asked, as multi-reads of [`NODES_PER_READ`] nodes each, all sent at once: one round
//! trip per gathering, however many holds. A node deleted behind a hold's back is therefore
//! found at the hold's next renewal, a third of the session timeout at most, as on the other
//! backends; a watch per hold would find it sooner but costs the client about 750 bytes and
//! the server a watch for as long as the hold lasts.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use lock_core::backend::Gather;
use lock_core::{Error, ErrorKind, Result};
use zookeeper_client::{self as zk, Client, MultiReadResult};

use crate::errors::{BACKEND, within};

/// The shortest and longest wait for more confirmations to share a read.
const GATHER_MIN: Duration = Duration::from_millis(5);
const GATHER_MAX: Duration = Duration::from_millis(100);

/// The longest a read waits while confirmations keep coming (a session renewing 100,000 holds
/// asks for them over a few hundred milliseconds).
const GATHER_LONGEST: Duration = Duration::from_millis(500);

/// Nodes read by one multi-read: its request and its answer (a stat and the node's label
/// each) stay far below the server's 1 MiB packet limit.
pub(crate) const NODES_PER_READ: usize = 512;

/// What a confirmation found: whether the node is there and ours, or why nothing was learnt.
type Found = std::result::Result<bool, String>;

/// The confirmations of one session.
#[derive(Debug)]
pub(crate) struct Confirmations(Gather<Arc<str>, Found>);

impl Confirmations {
    /// The confirmations of a session with `session_timeout`: a read leaves once a hundredth
    /// of it passed without another confirmation asked for (a hold asks with two thirds of it
    /// left).
    pub(crate) fn new(session_timeout: Duration) -> Self {
        let delay = (session_timeout / 100).clamp(GATHER_MIN, GATHER_MAX);
        Self(Gather::until_quiet(delay, GATHER_LONGEST))
    }

    /// Proves that the ensemble heard from `client`'s session at or after the call, and says
    /// whether the node at `path` is still there and owned by that session.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the node is read with its batch; the answer is discarded.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the read got no answer within `limit`, or an error answer.
    pub(crate) async fn confirm(
        &self,
        client: &Client,
        limit: Duration,
        path: Arc<str>,
    ) -> Result<bool> {
        let client = client.clone();
        let run = move |paths: Vec<Arc<str>>| read_all(client, limit, paths);
        match self.0.submit(path, run).await {
            Some(found) => found.map_err(unconfirmed),
            None => Err(unconfirmed(
                "the confirmation ended without an answer".to_owned(),
            )),
        }
    }
}

/// Reads every node of `paths`, [`NODES_PER_READ`] per request, every request sent before any
/// answer is awaited; one finding per path, in order.
async fn read_all(client: Client, limit: Duration, paths: Vec<Arc<str>>) -> Vec<Found> {
    let owner = client.session_id().0;
    let reads = paths
        .chunks(NODES_PER_READ)
        .map(|chunk| read(&client, limit, owner, chunk));
    join_all(reads).await.into_iter().flatten().collect()
}

/// One multi-read of the nodes of `paths`: one finding per path.
async fn read(client: &Client, limit: Duration, owner: i64, paths: &[Arc<str>]) -> Vec<Found> {
    let mut reader = client.new_multi_reader();
    for path in paths {
        if let Err(error) = reader.add_get_data(path) {
            return vec![Err(error.to_string()); paths.len()];
        }
    }
    let answers = match within(limit, "renew", reader.commit()).await {
        Ok(Ok(answers)) if answers.len() == paths.len() => answers,
        Ok(Ok(answers)) => {
            let cause = format!("{} answers to {} reads", answers.len(), paths.len());
            return vec![Err(cause); paths.len()];
        }
        Ok(Err(error)) => return vec![Err(error.to_string()); paths.len()],
        Err(error) => return vec![Err(error.to_string()); paths.len()],
    };
    answers
        .into_iter()
        .zip(paths)
        .map(|(answer, path)| finding(answer, owner, path))
        .collect()
}

fn finding(answer: MultiReadResult, owner: i64, path: &str) -> Found {
    match answer {
        MultiReadResult::Data { stat, .. } if stat.ephemeral_owner == owner => Ok(true),
        MultiReadResult::Data { .. }
        | MultiReadResult::Error {
            err: zk::Error::NoNode,
        } => {
            tracing::warn!(%path, "lock node deleted or no longer ours: the hold is lost");
            Ok(false)
        }
        MultiReadResult::Error { err } => Err(err.to_string()),
        _ => Err("a read was answered with something other than data".to_owned()),
    }
}

fn unconfirmed(cause: String) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        format!("the ZooKeeper hold could not be confirmed: {cause}"),
    )
    .with_backend(BACKEND)
    .with_operation("renew")
}
