//! The server side of one hold on a single master.

use std::time::Duration;

use async_trait::async_trait;
use lock_core::Result;
use lock_core::backend::HeldLock;

use crate::keys::LockKeys;
use crate::node::Node;

/// A hold on one master: the key and the token it must still contain.
#[derive(Debug)]
pub(crate) struct SingleHeld {
    pub(crate) node: Node,
    pub(crate) keys: LockKeys,
    pub(crate) token: String,
}

#[async_trait]
impl HeldLock for SingleHeld {
    async fn release(&self) -> Result<bool> {
        let released = self.node.release(&self.keys, &self.token).await;
        released.map_err(|error| error.with_operation("release"))
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        self.node
            .renew(&self.keys, &self.token, lease)
            .await
            .map_err(|error| error.with_operation("renew"))
    }
}
