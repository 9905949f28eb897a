//! One hold's server side, and the cleanup armed around each acquire statement.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{HeldLock, LockName, Result};

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
        let released = self.inner.release(&self.name, self.owner).await?;
        Ok(released)
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        self.inner
            .db
            .renew(self.name.as_str(), self.owner, lease)
            .await
            .map_err(|error| self.inner.error(error, "renew").with_lock(&self.name))
    }
}

/// Releases the row by owner token in the background unless disarmed: armed before an acquire
/// statement is sent, so a dropped future or a statement that failed mid-way (it may have
/// committed) leaves no hold behind.
pub(crate) struct Cleanup {
    armed: Option<(Arc<Inner>, LockName, Owner)>,
}

impl Cleanup {
    pub(crate) fn arm(inner: &Arc<Inner>, name: &LockName, owner: Owner) -> Self {
        Self {
            armed: Some((Arc::clone(inner), name.clone(), owner)),
        }
    }

    /// The statement's outcome is known: nothing to clean up.
    pub(crate) fn disarm(mut self) {
        self.armed = None;
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let Some((inner, name, owner)) = self.armed.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(error) = inner.release(&name, owner).await {
                        tracing::warn!(%error, "cleanup after an interrupted acquire failed; the lease will end any hold");
                    }
                });
            }
            Err(_) => tracing::warn!(
                %name,
                "acquire interrupted outside a tokio runtime; the lease will end any hold"
            ),
        }
    }
}
