//! The ZooKeeper floor: the two writes any lock recipe needs per pair (create an ephemeral node,
//! delete it), issued back to back from a plain `zookeeper-client` session with no recipe around
//! them: no sequence number, no children listing, no watch, no lease bookkeeping. Uncontended
//! only: a second client's create fails instead of waiting.

use async_trait::async_trait;
use zookeeper_client::{Acls, Client, CreateMode};

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One session creating and deleting the node `path`.
#[derive(Debug, Clone)]
pub struct ZkFloor {
    client: Client,
    path: String,
}

impl ZkFloor {
    /// Opens a session to `hosts` (`host:port,...`) for the node `path`, creating its parent.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the session it was opening.
    ///
    /// # Errors
    ///
    /// The session's or the parent's creation error.
    pub async fn connect(hosts: &str, path: &str) -> BenchResult<Self> {
        let client = Client::connector().connect(hosts).await?;
        if let Some((parent, _)) = path.rsplit_once('/') {
            let options = CreateMode::Persistent.with_acls(Acls::anyone_all());
            client.mkdir(parent, &options).await?;
        }
        Ok(Self {
            client,
            path: path.to_owned(),
        })
    }
}

struct FloorHeld(ZkFloor);

#[async_trait]
impl Contender for ZkFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let options = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
        self.client.create(&self.path, &[], &options).await?;
        Ok(Box::new(FloorHeld(self.clone())))
    }
}

#[async_trait]
impl Held for FloorHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        self.0.client.delete(&self.0.path, None).await?;
        Ok(())
    }
}
