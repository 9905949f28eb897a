//! What the bare-session ZooKeeper locks share: a session whose lock parent exists, and a hold
//! that is one node, released by deleting it.

use async_trait::async_trait;
use zookeeper_client::{Acls, Client, CreateMode};

use crate::BenchResult;
use crate::contend::Held;

/// The data of a lock node: an owner label of the default's shape and length (a host name and a
/// process id).
pub const LABEL: &[u8] = b"bench-host.example:123456";

/// Opens a session to `hosts` (`host:port,...`) and creates the persistent `parent` (and its
/// ancestors) if it is missing.
///
/// # Cancel safety
///
/// Cancel safe: dropping it closes the session it was opening; the parent, once made, stays.
///
/// # Errors
///
/// The session's or the parent's creation error.
pub async fn session_under(hosts: &str, parent: &str) -> BenchResult<Client> {
    let client = Client::connector().connect(hosts).await?;
    let options = CreateMode::Persistent.with_acls(Acls::anyone_all());
    client.mkdir(parent, &options).await?;
    Ok(client)
}

/// A hold that is the node at `path` of `client`'s session.
#[derive(Debug)]
pub struct NodeHeld {
    /// The session that made the node.
    pub client: Client,
    /// The node's path.
    pub path: String,
}

#[async_trait]
impl Held for NodeHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        self.client.delete(&self.path, None).await?;
        Ok(())
    }
}
