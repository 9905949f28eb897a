//! The ZooKeeper recipe floor: the server work every queue-based lock recipe does per pair
//! (Curator's `InterProcessMutex` and distlock's alike) from a plain `zookeeper-client`
//! session: create an ephemeral sequential node carrying an owner label, list the parent to
//! learn the node's place (sent right behind the create, so one round trip for both), delete
//! the node. No engine, no guard, no session bookkeeping. Beside the create+delete floor, it
//! shows what learning one's place in the queue costs the server. Uncontended only: it never
//! waits, and fails if another node is ahead of its own.

use async_trait::async_trait;
use zookeeper_client::{Acls, Client, CreateMode};

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// An owner label of a typical length (a host name and a process id).
const LABEL: &[u8] = b"bench-host.example:123456";

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
        let client = Client::connector().connect(hosts).await?;
        let options = CreateMode::Persistent.with_acls(Acls::anyone_all());
        client.mkdir(parent, &options).await?;
        Ok(Self {
            client,
            parent: parent.to_owned(),
        })
    }
}

struct RecipeHeld {
    client: Client,
    path: String,
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
        let ours = format!("lock-{sequence}");
        if children.iter().any(|child| *child < ours) {
            return Err("the recipe floor's node was not first: it runs uncontended only".into());
        }
        Ok(Box::new(RecipeHeld {
            client: self.client.clone(),
            path: format!("{base}{sequence}"),
        }))
    }
}

#[async_trait]
impl Held for RecipeHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        self.client.delete(&self.path, None).await?;
        Ok(())
    }
}
