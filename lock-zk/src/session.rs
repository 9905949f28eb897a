//! One ZooKeeper session and what the lock needs to know about it: connected, suspended, ended
//! (on the ensemble's word, or on the local clock once a disconnection has lasted until the
//! ensemble may have expired it).

use std::sync::Arc;

use lock_core::{CancellationToken, Error, ErrorKind, Result};
use zookeeper_client::{Acls, Client, CreateMode};

use crate::confirm::Confirmations;
use crate::errors::{BACKEND, convert, within};
use crate::expiry;
use crate::settings::Settings;
use crate::{tls, tls_probe};

/// A live session: the client, its configuration, and a token that fires when it ends.
#[derive(Debug)]
pub(crate) struct Session {
    client: Client,
    config: Arc<Settings>,
    ended: CancellationToken,
    /// Stops the state monitor when the last user of the session is gone.
    dropped: CancellationToken,
    confirmations: Confirmations,
}

impl Session {
    /// Establishes a session within the connect timeout, creating the chroot if it is missing.
    pub(crate) async fn open(config: Arc<Settings>) -> Result<Arc<Self>> {
        let mut connector = Client::connector().with_session_timeout(config.session_timeout);
        if let Some((user, password)) = &config.digest {
            connector = connector.with_auth("digest", format!("{user}:{password}").as_bytes());
        }
        let limit = config.service.connect_timeout;
        let hosts = &config.hosts;
        let connected = match &config.tls {
            Some(secure) => {
                tls::choose_provider();
                let connector = connector.with_tls(secure.options.clone());
                let session = tokio::time::timeout(limit, connector.secure_connect(hosts));
                let fault = tls_probe::handshake_fault(secure.probe.clone(), hosts);
                tokio::select! {
                    connected = session => connected,
                    Some(cause) = fault => {
                        let message = format!("TLS with {} failed: {cause}", config.server);
                        return Err(Error::new(ErrorKind::Unavailable, message)
                            .with_backend(BACKEND)
                            .with_operation("connect"));
                    }
                }
            }
            None => tokio::time::timeout(limit, connector.connect(hosts)).await,
        };
        let client = connected
            .map_err(|_| {
                Error::new(
                    ErrorKind::Unavailable,
                    format!(
                        "no ZooKeeper session with {} within {limit:?}",
                        config.server
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
                    config.service.operation_timeout,
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
        let confirmations = Confirmations::new(client.session_timeout());
        let (ended, dropped) = (CancellationToken::new(), CancellationToken::new());
        let session = Arc::new(Self {
            client,
            config,
            ended,
            dropped,
            confirmations,
        });
        session.spawn_monitor();
        Ok(session)
    }

    /// Fires `ended` when the session reaches a terminal state (expired, closed, auth failed) or
    /// stays disconnected until the ensemble may have expired it (see [`expiry`]); in the second
    /// case the session is also closed on the server once it can be reached.
    fn spawn_monitor(&self) {
        if self.client.state().is_terminated() {
            self.ended.cancel();
            return;
        }
        let states = self.client.state_watcher();
        let session_timeout = self.client.session_timeout();
        let close = {
            let hosts = self.config.hosts.clone();
            let info = self.client.session().clone();
            let connect_timeout = self.config.service.connect_timeout;
            let states = states.clone();
            move || {
                tokio::spawn(expiry::close_on_server(
                    hosts,
                    info,
                    session_timeout,
                    connect_timeout,
                    states,
                ));
            }
        };
        tokio::spawn(expiry::monitor(
            states,
            session_timeout,
            self.ended.clone(),
            self.dropped.clone(),
            close,
        ));
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn config(&self) -> &Settings {
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

    /// How long one request may take.
    pub(crate) fn operation_timeout(&self) -> std::time::Duration {
        self.config.service.operation_timeout
    }

    /// Proves that the ensemble heard from this session at or after the call, and says whether
    /// the node at `path` is still there and ours, sharing one read among every hold asking
    /// meanwhile (see [`Confirmations`]).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    ///
    /// # Errors
    ///
    /// `Unavailable` when no answer came within the operation timeout, or an error answer.
    pub(crate) async fn confirm(&self, path: Arc<str>) -> Result<bool> {
        let limit = self.operation_timeout();
        self.confirmations.confirm(&self.client, limit, path).await
    }

    /// The session timeout the server granted.
    pub(crate) fn session_timeout(&self) -> std::time::Duration {
        self.client.session_timeout()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}
