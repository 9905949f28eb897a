//! `list`: the held lock names, read from the root's children.
//!
//! Each lock name is one child of the root (`/` inside a name is escaped, see
//! [`names`](crate::names)), so the root's listing holds every name ever locked whose parent
//! still exists. A parent outlives its last lock node until ZooKeeper reaps the empty
//! container, so a name counts as held only while its parent has a lock node.

use futures_util::{StreamExt, TryStreamExt, stream};
use lock_core::backend::Deadline;
use lock_core::{LockName, Result};
use zookeeper_client as zk;

use crate::errors::{convert, within};
use crate::names::lock_name;
use crate::nodes::contenders;
use crate::session::Session;
use crate::steps::ZkSteps;

/// How many parents are listed at once: the requests share the session's connection.
const CONCURRENT_LISTINGS: usize = 16;

impl ZkSteps {
    /// The held names that start with `prefix`, sorted.
    pub(crate) async fn held_names(&self, prefix: &str) -> Result<Vec<LockName>> {
        let session = self.sessions.session(Deadline::NEVER).await?;
        let limit = session.operation_timeout();
        let listed = within(limit, "list", session.client().list_children(&self.root)).await?;
        let children = match listed {
            Ok(children) => children,
            // No lock was ever taken under this root.
            Err(zk::Error::NoNode) => return Ok(Vec::new()),
            Err(error) => return Err(convert(error, "list")),
        };
        let candidates: Vec<LockName> = children
            .iter()
            .filter_map(|child| lock_name(child))
            .filter(|name| name.as_str().starts_with(prefix))
            .collect();
        let session = &session;
        let mut held: Vec<LockName> = stream::iter(candidates)
            .map(|name| async move {
                let parent = self.parent(&name);
                Ok::<_, lock_core::Error>(has_lock_node(session, &parent).await?.then_some(name))
            })
            .buffer_unordered(CONCURRENT_LISTINGS)
            .try_filter_map(|held| async move { Ok(held) })
            .try_collect()
            .await?;
        held.sort();
        Ok(held)
    }
}

/// Whether `parent` has a lock node now; a parent deleted since the root's listing has none.
async fn has_lock_node(session: &Session, parent: &str) -> Result<bool> {
    let limit = session.operation_timeout();
    match within(limit, "list", session.client().list_children(parent)).await? {
        Ok(children) => Ok(!contenders(children).is_empty()),
        Err(zk::Error::NoNode) => Ok(false),
        Err(error) => Err(convert(error, "list")),
    }
}
