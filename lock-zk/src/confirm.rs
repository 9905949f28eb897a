//! Confirming a session: one request vouches for every hold of the session.
//!
//! A ZooKeeper hold lives as long as its session, so confirming a hold means proving that the
//! ensemble heard from the session recently: any answer to a request of ours does (watch
//! notifications do not: they can arrive over a link that no longer carries our requests). The
//! holds of one session share the proof: confirmations asked for within a hundredth of the
//! session timeout of each other are [gathered](Gather) into one request, sent after every one
//! of them asked, so holds renewing at scattered times cost at most one request per gathering
//! delay, however many there are, instead of one each.

use std::time::Duration;

use lock_core::backend::Gather;
use lock_core::{Error, ErrorKind, Result};
use zookeeper_client::Client;

use crate::errors::{BACKEND, within};

/// The shortest and longest gathering delay.
const GATHER_MIN: Duration = Duration::from_millis(5);
const GATHER_MAX: Duration = Duration::from_millis(100);

/// The confirmations of one session: each asker's outcome, answered or why not.
#[derive(Debug)]
pub(crate) struct Confirmations(Gather<(), std::result::Result<(), String>>);

impl Confirmations {
    /// The confirmations of a session with `session_timeout`, gathered for a hundredth of it
    /// (a hold asks with two thirds of it left).
    pub(crate) fn new(session_timeout: Duration) -> Self {
        let delay = (session_timeout / 100).clamp(GATHER_MIN, GATHER_MAX);
        Self(Gather::new(delay))
    }

    /// Proves that the ensemble heard from `client`'s session at or after the call: by the
    /// answer to a request sent since, shared with the confirmations asked for meanwhile.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the request goes out with its batch; the answer is discarded.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the request got no answer within `limit`, or an error answer.
    pub(crate) async fn confirm(&self, client: &Client, limit: Duration) -> Result<()> {
        let client = client.clone();
        let run = move |askers: Vec<()>| async move {
            let outcome = match within(limit, "renew", client.check_stat("/")).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(error)) => Err(error.to_string()),
                Err(error) => Err(error.to_string()),
            };
            vec![outcome; askers.len()]
        };
        match self.0.submit((), run).await {
            Some(outcome) => outcome.map_err(unconfirmed),
            None => Err(unconfirmed(
                "the confirmation ended without an answer".to_owned(),
            )),
        }
    }
}

fn unconfirmed(cause: String) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        format!("the ZooKeeper session could not be confirmed: {cause}"),
    )
    .with_backend(BACKEND)
    .with_operation("renew")
}
