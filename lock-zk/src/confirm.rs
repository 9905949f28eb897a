//! Confirming a session: one request vouches for every hold of the session.
//!
//! A ZooKeeper hold lives as long as its session, so confirming a hold means proving that the
//! ensemble heard from the session recently: any answer to a request of ours does (watch
//! notifications do not: they can arrive over a link that no longer carries our requests). The
//! holds of one session share the proof: a request answers for every confirmation asked for
//! before it was sent. One request is in flight at a time, and it is sent a short gathering
//! delay after the first confirmation asks for it, so every confirmation asked for meanwhile
//! shares it: holds renewing at scattered times cost at most one request per gathering delay,
//! however many there are, instead of one each.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lock_core::{Error, ErrorKind, Result};
use tokio::time::Instant;
use zookeeper_client::Client;

use crate::errors::{BACKEND, within};

/// The confirmations of one session.
#[derive(Debug, Default)]
pub(crate) struct Confirmations {
    /// Held while a request is in flight: askers queue in order.
    turn: tokio::sync::Mutex<()>,
    /// The last request: when it was sent, and whether it was answered.
    last: Mutex<Option<(Instant, Outcome)>>,
}

/// A request's outcome: answered, or why not.
type Outcome = std::result::Result<(), String>;

impl Confirmations {
    /// Proves that the ensemble heard from `client`'s session at or after the call: by the
    /// answer to a request sent since (`gather` after the first asker), its own or another
    /// asker's.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a dropped call leaves its place in the queue; a request it sent is still
    /// answered, and its answer serves the askers after it.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the request got no answer within `limit`, or an error answer.
    pub(crate) async fn confirm(
        &self,
        client: &Client,
        limit: Duration,
        gather: Duration,
    ) -> Result<()> {
        let asked = Instant::now();
        let _turn = self.turn.lock().await;
        if let Some((sent, outcome)) = self.last() {
            if sent >= asked {
                return outcome.map_err(unconfirmed);
            }
        }
        // Those who ask meanwhile queue behind us and take this request's answer.
        tokio::time::sleep(gather).await;
        let sent = Instant::now();
        let answered = within(limit, "renew", client.check_stat("/")).await;
        let outcome = match answered {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some((sent, outcome.clone()));
        outcome.map_err(unconfirmed)
    }

    fn last(&self) -> Option<(Instant, Outcome)> {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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
