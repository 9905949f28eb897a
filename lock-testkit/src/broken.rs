//! Deliberately broken locks: the suite must fail on each of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{
    AcquireOptions, Capabilities, DistributedLock, HeldLock, LockGuard, LockName, MemoryLock,
    Result,
};
use tokio::sync::Mutex;
use tokio::time::Instant;

/// The one thing a [`BrokenLock`] gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breakage {
    /// Every acquire is granted at once, held or not.
    NoMutualExclusion,
    /// Fencing tokens repeat instead of increasing.
    RepeatingFencingTokens,
    /// The lost signal never fires.
    NoLostSignal,
}

/// A lock that claims the full contract but breaks one rule.
#[derive(Clone, Debug)]
pub struct BrokenLock {
    breakage: Breakage,
    inner: MemoryLock,
    grants: Arc<AtomicU64>,
}

impl BrokenLock {
    /// A lock broken by `breakage`.
    pub fn new(breakage: Breakage) -> Self {
        Self {
            breakage,
            inner: MemoryLock::new(),
            grants: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Drops the hold on `name` in the underlying memory lock.
    pub fn sever(&self, name: &LockName) {
        self.inner.sever(name);
    }
}

/// Holds the real guard of the underlying lock.
#[derive(Debug)]
struct Wrapped(Mutex<Option<LockGuard>>);

#[async_trait]
impl HeldLock for Wrapped {
    async fn release(&self) -> Result<bool> {
        match self.0.lock().await.take() {
            Some(guard) => Ok(guard.release().await.is_ok()),
            None => Ok(true),
        }
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        match self.0.lock().await.as_ref() {
            Some(guard) => Ok(guard.extend(lease).await.is_ok()),
            None => Ok(true),
        }
    }
}

#[async_trait]
impl DistributedLock for BrokenLock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let grant = self.grants.fetch_add(1, Ordering::SeqCst) + 1;
        if self.breakage == Breakage::NoMutualExclusion {
            let held = Arc::new(Wrapped(Mutex::new(None)));
            return Ok(Some(
                LockGuard::builder(name.clone(), grant, held)
                    .backend("broken")
                    .build(),
            ));
        }
        let Some(real) = self.inner.acquire_with(name, options).await? else {
            return Ok(None);
        };
        let token = if self.breakage == Breakage::RepeatingFencingTokens {
            7
        } else {
            real.fencing_token()
        };
        let lost = real.lost().clone();
        let held = Arc::new(Wrapped(Mutex::new(Some(real))));
        let guard = LockGuard::builder(name.clone(), token, held).backend("broken");
        Ok(Some(match self.breakage {
            Breakage::NoLostSignal => guard.build(),
            _ => guard
                .lost(lost)
                .lease(Instant::now(), options.lease, options.auto_renew)
                .build(),
        }))
    }

    fn backend(&self) -> &'static str {
        "broken"
    }

    fn capabilities(&self) -> Capabilities {
        MemoryLock::new().capabilities()
    }
}
