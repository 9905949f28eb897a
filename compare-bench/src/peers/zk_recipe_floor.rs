//! The ZooKeeper recipe floor: the server work of a queue-based lock recipe (Curator's
//! `InterProcessMutex` and distlock's alike) from a plain `zookeeper-client` session, with no
//! engine, guard or session bookkeeping around it.
//!
//! Per pair: create an ephemeral sequential node carrying an owner label and list the parent
//! to learn the node's place (sent right behind the create, so one round trip for both); when
//! a node is ahead, read the one just ahead with a watch and wait for the watch; delete the node
//! to release. When the watched node was the only one ahead, its deletion makes ours the
//! lowest (sequence numbers only grow), so it holds without listing again, as distlock's waiter
//! does; otherwise it lists again. Uncontended, it shows what learning one's place by a listing
//! costs beside the create+delete floor (Curator lists every time; distlock skips the listing
//! when its create's zxid proves the node alone, so its uncontended floor is create+delete);
//! contended, it is the least server work of a handoff in a queue.

use async_trait::async_trait;
use zookeeper_client::{Acls, Client, CreateMode, EventType};

use super::zk_node::{LABEL, NodeHeld, session_under};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One client (its own session) of the queue under `parent`.
#[derive(Debug, Clone)]
pub struct ZkRecipeFloor {
    client: Client,
    parent: String,
}

impl ZkRecipeFloor {
    /// Connects to `hosts` and creates the persistent `parent` if it is missing.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the session it was opening; the parent, once made, stays.
    ///
    /// # Errors
    ///
    /// The session's or the create's error.
    pub async fn connect(hosts: &str, parent: &str) -> BenchResult<Self> {
        Ok(Self {
            client: session_under(hosts, parent).await?,
            parent: parent.to_owned(),
        })
    }

    /// Waits until `ours` is the lowest node, starting from the listing `children`.
    async fn wait_first(&self, ours: &str, mut children: Vec<String>) -> BenchResult<()> {
        loop {
            let ahead = children.iter().filter(|child| child.as_str() < ours);
            let (count, predecessor) = ahead.fold((0, None), |(count, last), child| {
                (count + 1, last.max(Some(child)))
            });
            let Some(predecessor) = predecessor else {
                return Ok(());
            };
            let path = format!("{}/{predecessor}", self.parent);
            match self.client.get_and_watch_data(&path).await {
                Ok((_, _, watcher)) => {
                    let event = watcher.changed().await;
                    if count == 1 && event.event_type == EventType::NodeDeleted {
                        return Ok(());
                    }
                }
                // Gone between the listing and the read: list again.
                Err(zookeeper_client::Error::NoNode) => {}
                Err(error) => return Err(error.into()),
            }
            children = self.client.list_children(&self.parent).await?;
        }
    }
}

#[async_trait]
impl Contender for ZkRecipeFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let options = CreateMode::EphemeralSequential.with_acls(Acls::anyone_all());
        let base = format!("{}/lock-", self.parent);
        // Both requests leave now, in this order: the listing answers after the create.
        let creating = self.client.create(&base, LABEL, &options);
        let listing = self.client.list_children(&self.parent);
        let (_, sequence) = creating.await?;
        let children = listing.await?;
        self.wait_first(&format!("lock-{sequence}"), children)
            .await?;
        Ok(Box::new(NodeHeld {
            client: self.client.clone(),
            path: format!("{base}{sequence}"),
        }))
    }
}
