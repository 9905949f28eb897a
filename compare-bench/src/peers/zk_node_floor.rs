//! The ZooKeeper node floor: the two writes of distlock's uncontended pair with the node
//! distlock writes, from a plain `zookeeper-client` session with no engine, guard or session
//! bookkeeping around them.
//!
//! Per pair: create an ephemeral sequential node named as distlock (and Curator) name theirs,
//! `_c_<uuid>-lock-<sequence>` (a fresh uuid per acquisition, so a create whose answer was lost
//! can be found), carrying an owner label of the default's length as its data; then delete it.
//! Beside the create+delete floor (a fixed ephemeral path, no data) it shows what that node costs
//! the server: a sequence number from the parent, a longer path, the label. Uncontended only:
//! it never looks at other nodes, so two clients would both "hold".

use async_trait::async_trait;
use zookeeper_client::{Acls, Client, CreateMode};

use super::zk_node::{LABEL, NodeHeld, session_under};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One session writing lock nodes under `parent`.
#[derive(Debug, Clone)]
pub struct ZkNodeFloor {
    client: Client,
    parent: String,
}

impl ZkNodeFloor {
    /// Opens a session to `hosts` (`host:port,...`) and creates the persistent `parent` if it is
    /// missing.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the session it was opening; the parent, once made, stays.
    ///
    /// # Errors
    ///
    /// The session's or the parent's creation error.
    pub async fn connect(hosts: &str, parent: &str) -> BenchResult<Self> {
        Ok(Self {
            client: session_under(hosts, parent).await?,
            parent: parent.to_owned(),
        })
    }
}

#[async_trait]
impl Contender for ZkNodeFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let options = CreateMode::EphemeralSequential.with_acls(Acls::anyone_all());
        let base = format!("{}/_c_{}-lock-", self.parent, uuid::Uuid::new_v4());
        let (_, sequence) = self.client.create(&base, LABEL, &options).await?;
        Ok(Box::new(NodeHeld {
            client: self.client.clone(),
            path: format!("{base}{sequence}"),
        }))
    }
}
