//! Deliberately broken locks: the suite must fail on each of them.

mod claims;
mod elections;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use lock_core::backend::{Grant, HeldLock, Leases};
use lock_core::{
    AcquireOptions, Capabilities, Claim, DistributedLock, Leader, LeaderTicks, LockGuard, LockName,
    LockStatus, MemoryLock, Result,
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
    /// Renewals extend the server's lease by half of what they ask, so the guard counts on
    /// more than the server keeps (a unit mix-up).
    OverstatedLease,
    /// An extend the holder asks for waits as long as a gathered renewal does (5 ms for
    /// others to share its round trip) before it goes out.
    ExtendWaitsForABatch,
    /// URLs with unknown parameters or broken escapes are accepted.
    LaxUrls,
    /// `force_release` ignores the fencing token: it ends whatever hold there is.
    ForceReleaseIgnoresToken,
    /// `max_hold` is ignored: holds renew for as long as the guard lives.
    NoMaxHold,
    /// `inspect` never counts waiters.
    NoWaiterCount,
    /// A semaphore admits one holder more than its limit.
    SemaphoreAdmitsOneMore,
    /// A write hold is taken as a read hold: writers share with readers.
    WriterSharesWithReaders,
    /// Writers poll instead of waiting in line, so a stream of readers starves them.
    StarvesWriters,
    /// A campaign deposes the sitting leader behind its back and leads at once.
    TwoLeaders,
    /// Observers get no pushes and terms that look consecutive whatever they missed.
    HiddenGaps,
    /// Observers get no pushes: they learn of changes only when they poll.
    UnpushedChanges,
}

/// The token every grant carries under [`Breakage::RepeatingFencingTokens`].
const REPEATED_TOKEN: u64 = 7;

/// A lock that claims the full contract but breaks one rule.
#[derive(Clone, Debug)]
pub struct BrokenLock {
    breakage: Breakage,
    inner: MemoryLock,
    grants: Arc<AtomicU64>,
    made_up_terms: Arc<elections::MadeUpTerms>,
    leases: Leases,
}

impl BrokenLock {
    /// A lock broken by `breakage`.
    pub fn new(breakage: Breakage) -> Self {
        Self {
            breakage,
            inner: MemoryLock::new(),
            leases: Leases::default(),
            grants: Arc::new(AtomicU64::new(0)),
            made_up_terms: Arc::default(),
        }
    }

    /// Drops the hold on `name` in the underlying memory lock.
    pub fn sever(&self, name: &LockName) {
        self.inner.sever(name);
    }

    /// What is broken.
    pub fn breakage(&self) -> Breakage {
        self.breakage
    }

    /// The underlying memory lock's lease left on `name`.
    pub fn lease_left(&self, name: &LockName) -> Option<Duration> {
        self.inner.lease_left(name)
    }

    /// A guard over `real` (none: a grant that holds nothing) carrying `token`, renewing and
    /// signalling loss as the breakage says.
    fn wrap(
        &self,
        real: Option<LockGuard>,
        token: u64,
        name: &LockName,
        options: &AcquireOptions,
    ) -> LockGuard {
        let lost = real.as_ref().map(|real| real.lost().clone());
        let held = Arc::new(Wrapped {
            guard: Mutex::new(real),
            lie: self.breakage == Breakage::NoLostSignal,
            halve: self.breakage == Breakage::OverstatedLease,
            extend_waits: self.breakage == Breakage::ExtendWaitsForABatch,
        });
        let grant = Grant::new(token, held, Instant::now());
        let grant = match lost {
            Some(lost) if self.breakage != Breakage::NoLostSignal => grant.lost(lost),
            _ => grant,
        };
        grant.into_guard(name.clone(), "broken", options, &self.leases)
    }
}

/// Holds the real guard of the underlying lock; with `lie`, renewals claim success whatever
/// happened to it; with `halve`, they extend it by half of what they ask; with
/// `extend_waits`, the holder's extends wait as long as a gathered renewal.
#[derive(Debug)]
struct Wrapped {
    guard: Mutex<Option<LockGuard>>,
    lie: bool,
    halve: bool,
    extend_waits: bool,
}

/// How long a gathered renewal waits for others (lock-core's `Gather::renewals`).
const GATHERED_WAIT: Duration = Duration::from_millis(5);

#[async_trait]
impl HeldLock for Wrapped {
    async fn release(&self) -> Result<bool> {
        match self.guard.lock().await.take() {
            Some(guard) => Ok(guard.release().await.is_ok()),
            None => Ok(true),
        }
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        match self.guard.lock().await.as_ref() {
            Some(guard) if self.halve => Ok(guard.extend(lease / 2).await.is_ok()),
            Some(guard) if !self.lie => Ok(guard.extend(lease).await.is_ok()),
            _ => Ok(true),
        }
    }

    async fn extend(&self, lease: Duration) -> Result<bool> {
        if self.extend_waits {
            tokio::time::sleep(GATHERED_WAIT).await;
        }
        self.renew(lease).await
    }
}

#[async_trait]
impl DistributedLock for BrokenLock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let mut options = options.clone();
        if self.breakage == Breakage::NoMaxHold {
            options.max_hold = None;
        }
        let options = &options;
        let grant = self.grants.fetch_add(1, Ordering::SeqCst) + 1;
        let real = match self.breakage {
            Breakage::NoMutualExclusion => None,
            _ => match self.inner.acquire_with(name, options).await? {
                Some(real) => Some(real),
                None => return Ok(None),
            },
        };
        let token = match (&real, self.breakage) {
            (_, Breakage::RepeatingFencingTokens) => REPEATED_TOKEN,
            (Some(real), _) => real.fencing_token(),
            (None, _) => grant,
        };
        Ok(Some(self.wrap(real, token, name, options)))
    }

    async fn acquire_claim_with(
        &self,
        name: &LockName,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        claims::acquire(&self.inner, self.breakage, name, claim, options).await
    }

    async fn campaign_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        elections::campaign(self, name, options).await
    }

    async fn read_leader(&self, name: &LockName) -> Result<Option<Leader>> {
        elections::read_leader(self, name).await
    }

    async fn watch_leader(&self, name: &LockName) -> Result<LeaderTicks> {
        elections::watch_leader(self, name).await
    }

    fn backend(&self) -> &'static str {
        "broken"
    }

    async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        let mut status = self.inner.inspect(name).await?;
        if self.breakage == Breakage::NoWaiterCount {
            status.waiters = 0;
        }
        Ok(status)
    }

    async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        self.inner.list(prefix).await
    }

    async fn force_release(&self, name: &LockName, fencing_token: u64) -> Result<bool> {
        if self.breakage == Breakage::ForceReleaseIgnoresToken {
            return Ok(self.inner.sever(name));
        }
        self.inner.force_release(name, fencing_token).await
    }

    fn capabilities(&self) -> Capabilities {
        MemoryLock::new().capabilities()
    }
}
