//! The server side of one hold on a single master.

use std::time::Duration;

use async_trait::async_trait;
use lock_core::Result;
use lock_core::backend::{HeldLock, Sending};

use crate::keys::LockKeys;
use crate::node::Node;

/// A hold on one master: the lock key and the token it must still contain. The other keys of
/// the name derive from the lock key when a release needs them, so a hold keeps one key, not
/// five (holds are many; releases are one each).
#[derive(Debug)]
pub(crate) struct SingleHeld {
    pub(crate) node: Node,
    pub(crate) lock: Box<str>,
    pub(crate) token: Box<str>,
}

#[async_trait]
impl HeldLock for SingleHeld {
    async fn release(&self) -> Result<bool> {
        let keys = LockKeys::of_lock(self.lock.to_string());
        let released = self.node.release(&keys, &self.token).await;
        released.map_err(|error| error.with_operation("release"))
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        self.renew_sent(lease, Sending::Gathered).await
    }

    async fn extend(&self, lease: Duration) -> Result<bool> {
        self.renew_sent(lease, Sending::AtOnce).await
    }
}

impl SingleHeld {
    async fn renew_sent(&self, lease: Duration, sending: Sending) -> Result<bool> {
        self.node
            .renew(&self.lock, &self.token, lease, sending)
            .await
            .map_err(|error| error.with_operation("renew"))
    }
}
