//! The `rslock` crate (Redlock) on one Redis, used as its README shows, with default retries.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One rslock `LockManager` (its own connection) for one resource.
#[derive(Clone)]
pub struct RsLock {
    manager: Arc<rslock::LockManager>,
    resource: String,
    ttl: Duration,
}

impl std::fmt::Debug for RsLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RsLock")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl RsLock {
    /// A manager for the single Redis at `url` and lock `resource` with a 30 s TTL.
    pub fn new(url: &str, resource: &str) -> Self {
        Self {
            manager: Arc::new(rslock::LockManager::new(vec![url.to_owned()])),
            resource: resource.to_owned(),
            ttl: Duration::from_secs(30),
        }
    }
}

struct RsHeld {
    manager: Arc<rslock::LockManager>,
    lock: rslock::Lock,
}

#[async_trait]
impl Contender for RsLock {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let lock = self
            .manager
            .acquire_no_guard(self.resource.as_bytes(), self.ttl)
            .await
            .map_err(|error| format!("rslock: {error:?}"))?;
        Ok(Box::new(RsHeld {
            manager: Arc::clone(&self.manager),
            lock,
        }))
    }
}

#[async_trait]
impl Held for RsHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        self.manager.unlock(&self.lock).await;
        Ok(())
    }
}
