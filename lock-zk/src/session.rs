//! One ZooKeeper session and what the lock needs to know about it: connected, suspended, ended.

use std::sync::Arc;

use lock_core::{CancellationToken, Error, ErrorKind, Result};
use zookeeper_client::{Acls, Client, CreateMode, SessionState};

use crate::ZkConfig;
use crate::errors::{BACKEND, convert, within};

/// A live session: the client, its configuration, and a token that fires when it ends.
#[derive(Debug)]
pub(crate) struct Session {
    client: Client,
    config: Arc<ZkConfig>,
    ended: CancellationToken,
    /// Stops the state monitor when the last user of the session is gone.
    dropped: CancellationToken,
}

impl Session {
    /// Establishes a session within the connect timeout, creating the chroot if it is missing.
    pub(crate) async fn open(config: Arc<ZkConfig>) -> Result<Arc<Self>> {
        let mut connector = Client::connector().with_session_timeout(config.session_timeout);
        if let Some((user, password)) = &config.digest {
            connector = connector.with_auth("digest", format!("{user}:{password}").as_bytes());
        }
        let limit = config.connect_timeout;
        let connected = tokio::time::timeout(limit, connector.connect(&config.hosts)).await;
        let client = connected
            .map_err(|_| {
                Error::new(
                    ErrorKind::Unavailable,
                    format!(
                        "no ZooKeeper session with {} within {limit:?}",
                        config.hosts
                    ),
                )
                .with_backend(BACKEND)
                .with_operation("connect")
            })?
            .map_err(|error| convert(error, "connect"))?;
        let client = match &config.chroot {
            None => client,
            Some(chroot) => {
                let acl = config.acl.entries();
                let options = CreateMode::Persistent.with_acls(Acls::new(&acl));
                within(
                    config.operation_timeout(),
                    "connect",
                    client.mkdir(chroot, &options),
                )
                .await?
                .map_err(|error| convert(error, "connect"))?;
                client.chroot(chroot.clone()).map_err(|_| {
                    Error::invalid_input(format!("chroot {chroot:?} is not a valid path"))
                })?
            }
        };
        let session = Arc::new(Self {
            client,
            config,
            ended: CancellationToken::new(),
            dropped: CancellationToken::new(),
        });
        session.spawn_monitor();
        Ok(session)
    }

    /// Fires `ended` when the session reaches a terminal state (expired, closed, auth failed).
    fn spawn_monitor(&self) {
        let mut states = self.client.state_watcher();
        let (ended, dropped) = (self.ended.clone(), self.dropped.clone());
        if self.client.state().is_terminated() {
            ended.cancel();
            return;
        }
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = dropped.cancelled() => return,
                    state = states.changed() => if state.is_terminated() {
                        tracing::warn!(?state, "ZooKeeper session ended; its locks are lost");
                        ended.cancel();
                        return;
                    },
                }
            }
        });
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn config(&self) -> &ZkConfig {
        &self.config
    }

    /// Fires when the session has ended for good.
    pub(crate) fn ended(&self) -> &CancellationToken {
        &self.ended
    }

    /// Whether the session has ended (its ephemeral nodes are gone or going).
    pub(crate) fn is_ended(&self) -> bool {
        self.ended.is_cancelled() || self.client.state().is_terminated()
    }

    /// Whether the connection is down while the session may still live.
    pub(crate) fn is_suspended(&self) -> bool {
        self.client.state() == SessionState::Disconnected
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}
