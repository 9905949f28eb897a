//! A hold: our lock node. The session's end fires its lost signal at once; a node deleted
//! behind its back is found by its next renewal (see [`confirm`](crate::confirm)).

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::HeldLock;
use lock_core::{CancellationToken, Error, ErrorKind, Result, async_trait};
use zookeeper_client::{self as zk, SessionState};

use crate::errors::{BACKEND, convert, is_connection_loss, within};
use crate::lone::LoneHold;
use crate::session::Session;

/// The backend's side of a [`LockGuard`](lock_core::LockGuard): the path of our lock node, and
/// whether it was alone in its queue when granted.
#[derive(Debug)]
pub(crate) struct ZkHeld {
    session: Arc<Session>,
    path: Arc<str>,
    lone: Option<LoneHold>,
}

impl ZkHeld {
    /// The hold of the node at `path`, with its lost signal: a child of the session's end,
    /// so that the end fires every hold's signal without a list of the holds. With `lone`,
    /// a release that deletes the node leaves a note for the lock's next acquisition.
    pub(crate) fn start(
        session: Arc<Session>,
        path: String,
        lone: Option<LoneHold>,
    ) -> (Arc<Self>, CancellationToken) {
        let lost = session.ended().child_token();
        let path = path.into();
        (
            Arc::new(Self {
                session,
                path,
                lone,
            }),
            lost,
        )
    }
}

#[async_trait]
impl HeldLock for ZkHeld {
    async fn release(&self) -> Result<bool> {
        let limit = self.session.operation_timeout();
        let client = self.session.client();
        let mut retried = false;
        loop {
            if self.session.is_ended() {
                // The session's end deleted the node: the hold ended before this release.
                return Ok(false);
            }
            match within(limit, "release", client.delete(&self.path, None)).await? {
                Ok(()) => {
                    if let Some(lone) = &self.lone {
                        lone.deleted(&self.path);
                    }
                    return Ok(true);
                }
                // After an ambiguous first attempt, a missing node means that attempt deleted it.
                Err(zk::Error::NoNode) => return Ok(retried),
                Err(error) if is_connection_loss(&error) && !retried => retried = true,
                Err(_) if self.session.is_ended() => return Ok(false),
                Err(error) => return Err(convert(error, "release")),
            }
        }
    }

    /// Confirms the hold: a read of its node, sent since the call, proves the ensemble heard
    /// from the session then, so it cannot expire the session (and delete the node) until a
    /// session timeout later: the engine's lease. The same read finds a node deleted while its
    /// session lives (`Ok(false)`). Only answers to our own requests count; watch notifications
    /// arriving over a link that no longer carries our requests (a one-way partition) prove
    /// nothing. The holds of a session renewing together share their reads.
    async fn renew(&self, _lease: Duration) -> Result<bool> {
        if self.session.is_ended() {
            return Ok(false);
        }
        if self.session.client().state() == SessionState::Disconnected {
            // A request would only wait for the reconnection: report the suspension now.
            return Err(Error::new(
                ErrorKind::Unavailable,
                "disconnected from ZooKeeper; the session may still live",
            )
            .with_backend(BACKEND)
            .with_operation("renew"));
        }
        let present = self.session.confirm(Arc::clone(&self.path)).await?;
        Ok(present && !self.session.is_ended())
    }

    /// Writes the label as our node's data (what Curator's `LeaderLatch` reads as the id).
    async fn relabel(&self, label: &str) -> Result<bool> {
        if self.session.is_ended() {
            return Ok(false);
        }
        let limit = self.session.operation_timeout();
        let write = self
            .session
            .client()
            .set_data(&self.path, label.as_bytes(), None);
        match within(limit, "proclaim", write).await? {
            Ok(_) => Ok(true),
            Err(zk::Error::NoNode) => Ok(false),
            Err(_) if self.session.is_ended() => Ok(false),
            Err(error) => Err(convert(error, "proclaim")),
        }
    }
}
