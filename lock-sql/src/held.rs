//! One hold's server side: a row released and renewed by comparing the owner token.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::backend::{HeldLock, Sending};
use lock_core::{LockName, Result};

use crate::db::Owner;
use crate::lock::Inner;

/// A row we own: released and renewed by comparing the owner token.
#[derive(Debug)]
pub(crate) struct SqlHeld {
    pub(crate) inner: Arc<Inner>,
    pub(crate) name: LockName,
    pub(crate) owner: Owner,
}

#[async_trait]
impl HeldLock for SqlHeld {
    async fn release(&self) -> Result<bool> {
        let released = self.inner.release(None, &self.name, self.owner).await?;
        Ok(released)
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        self.renew_sent(lease, Sending::Gathered).await
    }

    async fn extend(&self, lease: Duration) -> Result<bool> {
        self.renew_sent(lease, Sending::AtOnce).await
    }
}

impl SqlHeld {
    async fn renew_sent(&self, lease: Duration, sending: Sending) -> Result<bool> {
        self.inner
            .db
            .renew(self.name.as_str(), self.owner, lease, sending)
            .await
            .map_err(|error| self.inner.error(error, "renew").with_lock(&self.name))
    }
}
