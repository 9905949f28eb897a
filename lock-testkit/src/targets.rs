//! Conformance targets that need no server: the in-memory backend and deliberately broken locks.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{DistributedLock, LockName, MemoryLock, Result};

use crate::ConformanceTarget;
use crate::broken::{Breakage, BrokenLock};

/// The in-memory backend: every client shares one [`MemoryLock`].
#[derive(Debug, Default)]
pub struct MemoryTarget {
    lock: MemoryLock,
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
}
