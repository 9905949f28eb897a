//! Conformance targets that need no server: the in-memory backend and deliberately broken locks.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{DistributedLock, LockName, MemoryLock, Result};

use crate::ConformanceTarget;
use crate::broken::{Breakage, BrokenLock};

/// The in-memory backend: every client is `memory://NAME` for one name of its own, so every
/// client shares one [`MemoryLock`].
#[derive(Debug)]
pub struct MemoryTarget {
    url: String,
    lock: MemoryLock,
}

impl Default for MemoryTarget {
    fn default() -> Self {
        let url = format!("memory://conformance-{:016x}", rand::random::<u64>());
        let lock = MemoryLock::from_url(&url).unwrap_or_default();
        Self { url, lock }
    }
}

#[async_trait]
impl ConformanceTarget for MemoryTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(self.lock.clone()))
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        self.lock.sever(name);
        Ok(())
    }

    async fn unreachable_client(
        &self,
        _addr: SocketAddr,
        _timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        None
    }

    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }

    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(MemoryLock::from_url(url)?))
    }

    async fn lease_left(&self, name: &LockName) -> Option<Duration> {
        self.lock.lease_left(name)
    }
}

/// A lock broken in one way, to prove the suite catches it.
#[derive(Debug)]
pub struct BrokenTarget {
    lock: BrokenLock,
}

impl BrokenTarget {
    /// A target whose lock has `breakage`.
    pub fn new(breakage: Breakage) -> Self {
        Self {
            lock: BrokenLock::new(breakage),
        }
    }
}

#[async_trait]
impl ConformanceTarget for BrokenTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(self.lock.clone()))
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        self.lock.sever(name);
        Ok(())
    }

    async fn unreachable_client(
        &self,
        _addr: SocketAddr,
        _timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        None
    }

    fn url(&self) -> Option<String> {
        Some("memory://broken".to_owned())
    }

    /// With [`Breakage::LaxUrls`], drops the query instead of checking it.
    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        if self.lock.breakage() == Breakage::LaxUrls {
            let base = url.split_once('?').map_or(url, |(base, _)| base);
            let base = base.split('%').next().unwrap_or(base);
            return Ok(Arc::new(MemoryLock::from_url(base).unwrap_or_default()));
        }
        Ok(Arc::new(MemoryLock::from_url(url)?))
    }

    async fn lease_left(&self, name: &LockName) -> Option<Duration> {
        self.lock.lease_left(name)
    }
}
