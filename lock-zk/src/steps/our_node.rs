//! An acquisition's own lock node: created once per session, and what its create told of its
//! queue.

use std::sync::Arc;

use lock_core::Result;
use tokio::time::Instant;

use super::{ZkAttempt, ZkSteps};
use crate::label::node_data;
use crate::lone::proves_alone;
use crate::node::{self, Listed};
use crate::nodes::protected_prefix;
use crate::recipe::Recipe;
use crate::session::Session;

/// The node an acquisition owns, or may own while its create is in flight.
#[derive(Debug)]
pub(super) struct OurNode {
    pub(super) session: Arc<Session>,
    /// `_c_<uuid>-`: unique to this acquisition, so a node whose create answer was lost can be
    /// found (and cleaned up) again.
    pub(super) prefix: String,
    pub(super) path: Option<(String, i64)>,
}

/// Our node, and what its create told of its queue: the listing sent with it, or, when sent
/// without one, when it was sent if its zxid proves the node alone.
pub(super) struct Ensured<'a> {
    pub(super) session: &'a Arc<Session>,
    pub(super) path: String,
    pub(super) czxid: i64,
    pub(super) listed: Option<Listed>,
    pub(super) alone_since: Option<Instant>,
}

impl ZkSteps {
    /// Our node, created (on a live session) if there is none, with the parent's listing when
    /// it was sent together with the create. A mutex whose last hold here was alone sends its
    /// create alone, and lists only when the create's zxid does not prove it alone.
    pub(super) async fn ensure_node<'a>(&self, attempt: &'a mut ZkAttempt) -> Result<Ensured<'a>> {
        if attempt
            .node
            .as_ref()
            .is_some_and(|node| node.session.is_ended())
        {
            // The session's end took the node with it.
            attempt.node = None;
        }
        if attempt.node.is_none() {
            let session = self.sessions.session(attempt.deadline).await?;
            attempt.node = Some(OurNode {
                session,
                prefix: protected_prefix(),
                path: None,
            });
        }
        let node = attempt.node.as_mut().ok_or_else(|| lost_node("no node"))?;
        let (mut listed, mut alone_since) = (None, None);
        if node.path.is_none() {
            // Armed from here: the create may take effect even if its answer never comes.
            let data = node_data(&attempt.label);
            let (parent, marker) = (&attempt.parent, attempt.recipe.marker());
            if attempt.recipe == Recipe::Latch {
                // The election's term lives in its parent, which must outlive its candidates.
                crate::election::make_parent(&node.session, parent).await?;
            }
            let noted = match attempt.recipe {
                Recipe::Mutex => self.lone.take(parent),
                _ => None,
            };
            let (session, prefix) = (&node.session, &node.prefix);
            let sent = Instant::now();
            let list = noted.is_none();
            let (created, listing) =
                node::create_then_list(session, parent, prefix, marker, data, list).await?;
            alone_since = noted
                .filter(|&noted| proves_alone(noted, created.1))
                .map(|_| sent);
            node.path = Some(created);
            listed = listing;
        }
        let (path, czxid) = node.path.clone().ok_or_else(|| lost_node("no path"))?;
        Ok(Ensured {
            session: &node.session,
            path,
            czxid,
            listed,
            alone_since,
        })
    }
}

fn lost_node(what: &str) -> lock_core::Error {
    lock_core::Error::new(lock_core::ErrorKind::Backend, format!("internal: {what}"))
}
