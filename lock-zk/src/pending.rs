//! Our lock node while an acquisition is in flight: protected create, and cleanup armed before
//! the first request so a dropped acquire never leaves a node behind.

use std::sync::Arc;

use lock_core::Result;
use zookeeper_client::{self as zk, Acls, Client, CreateMode};

use crate::errors::{convert, is_connection_loss, within};
use crate::nodes::{LOCK_MARKER, protected_prefix};
use crate::session::Session;

/// How often a create may hit a vanished parent or a lost connection before giving up.
const CREATE_ATTEMPTS: u32 = 10;

/// The node one acquisition owns (or may own: a create can be in flight). Dropping it while
/// armed deletes the node in the background; [`disarm`](PendingNode::disarm) hands it to a hold.
#[derive(Debug)]
pub(crate) struct PendingNode {
    session: Arc<Session>,
    parent: String,
    prefix: String,
    path: Option<String>,
    armed: bool,
}

impl PendingNode {
    pub(crate) fn new(session: Arc<Session>, parent: String) -> Self {
        Self {
            session,
            parent,
            prefix: protected_prefix(),
            path: None,
            armed: false,
        }
    }

    /// The node's name within the parent, once created.
    pub(crate) fn node(&self) -> Option<&str> {
        let path = self.path.as_deref()?;
        path.rsplit_once('/').map(|(_, node)| node)
    }

    /// Creates `<parent>/_c_<uuid>-lock-<seq>` (ephemeral sequential), creating missing parents
    /// as container nodes, and returns its creation zxid. After a connection loss during the
    /// create, looks for a node with our prefix before creating again (Curator's protection).
    pub(crate) async fn create(&mut self) -> Result<i64> {
        self.prefix = protected_prefix();
        self.path = None;
        self.armed = true;
        let config = self.session.config();
        let (limit, acl) = (config.operation_timeout(), config.acl.entries());
        let options = CreateMode::EphemeralSequential.with_acls(Acls::new(&acl));
        let base = format!("{}/{}{LOCK_MARKER}", self.parent, self.prefix);
        let session = Arc::clone(&self.session);
        let client = session.client();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let created = within(limit, "acquire", client.create(&base, &[], &options)).await?;
            match created {
                Ok((stat, sequence)) => {
                    self.path = Some(format!("{base}{sequence}"));
                    return Ok(stat.czxid);
                }
                Err(zk::Error::NoNode) if attempt < CREATE_ATTEMPTS => self.make_parents().await?,
                Err(error) if is_connection_loss(&error) && attempt < CREATE_ATTEMPTS => {
                    if let Some(czxid) = self.find().await? {
                        return Ok(czxid);
                    }
                }
                Err(error) => return Err(convert(error, "acquire")),
            }
        }
    }

    /// Creates the lock's parent (and missing ancestors) as container nodes, which ZooKeeper
    /// deletes once their last child is gone.
    async fn make_parents(&self) -> Result<()> {
        let config = self.session.config();
        let acl = config.acl.entries();
        let options = CreateMode::Container.with_acls(Acls::new(&acl));
        let made = self.session.client().mkdir(&self.parent, &options);
        within(config.operation_timeout(), "acquire", made)
            .await?
            .map_err(|error| convert(error, "acquire"))
    }

    /// Our node, found by its protected prefix after an ambiguous create; its creation zxid.
    async fn find(&mut self) -> Result<Option<i64>> {
        let limit = self.session.config().operation_timeout();
        let client = self.session.client();
        let children = match within(limit, "acquire", client.list_children(&self.parent)).await? {
            Ok(children) => children,
            Err(zk::Error::NoNode) => return Ok(None),
            Err(error) if is_connection_loss(&error) => return Ok(None),
            Err(error) => return Err(convert(error, "acquire")),
        };
        let Some(node) = children.into_iter().find(|c| c.starts_with(&self.prefix)) else {
            return Ok(None);
        };
        let path = format!("{}/{node}", self.parent);
        match within(limit, "acquire", client.check_stat(&path)).await? {
            Ok(Some(stat)) => {
                self.path = Some(path);
                Ok(Some(stat.czxid))
            }
            Ok(None) => Ok(None),
            Err(error) if is_connection_loss(&error) => Ok(None),
            Err(error) => Err(convert(error, "acquire")),
        }
    }

    /// Forgets a node that vanished (deleted behind our back) so the next create starts afresh.
    pub(crate) fn forget(&mut self) {
        self.path = None;
        self.armed = false;
    }

    /// Deletes the node now (the acquisition gave up); on failure the drop cleanup retries.
    pub(crate) async fn remove(mut self) {
        let Some(path) = self.path.clone() else {
            return;
        };
        let limit = self.session.config().operation_timeout();
        let deleted = within(limit, "acquire", self.session.client().delete(&path, None)).await;
        if let Ok(Ok(()) | Err(zk::Error::NoNode)) = deleted {
            self.armed = false;
        }
    }

    /// Hands the node over to a hold: no cleanup on drop any more. Returns its path.
    pub(crate) fn disarm(mut self) -> String {
        self.armed = false;
        self.path.take().unwrap_or_default()
    }
}

impl Drop for PendingNode {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(parent = %self.parent, "acquire dropped outside a runtime; the session end removes its node");
            return;
        };
        let client = self.session.client().clone();
        // Send the first request now, so it is ordered before anything this session sends next.
        match self.path.take() {
            Some(path) => {
                let delete = client.delete(&path, None);
                runtime.spawn(async move {
                    if delete.await.is_err_and(|error| is_connection_loss(&error)) {
                        let _ = client.delete(&path, None).await;
                    }
                });
            }
            None => {
                let listed = client.get_children(&self.parent);
                let (parent, prefix) = (self.parent.clone(), self.prefix.clone());
                runtime.spawn(async move {
                    let children = match listed.await {
                        Ok((children, _)) => children,
                        Err(_) => return,
                    };
                    delete_prefixed(&client, &parent, &prefix, children).await;
                });
            }
        }
    }
}

async fn delete_prefixed(client: &Client, parent: &str, prefix: &str, children: Vec<String>) {
    if let Some(node) = children.into_iter().find(|c| c.starts_with(prefix)) {
        let _ = client.delete(&format!("{parent}/{node}"), None).await;
    }
}
