//! The in-memory backend: the reference semantics, a test double for users, and the worked
//! example of a backend on the engine.

mod admin;
mod claim_held;
mod claim_steps;
mod claims;
mod election;
mod held;
mod registry;
mod steps;

use std::sync::Arc;

use async_trait::async_trait;

use crate::backend::ServiceOptions;
use crate::url::LockUrl;
use crate::{
    AcquireOptions, Capabilities, Claim, DistributedLock, Leader, LeaderTicks, LockGuard, LockName,
    LockStatus, Result,
};
use claim_steps::ClaimSteps;
use steps::Shared;

/// Locks shared by everything in this process that clones one `MemoryLock`.
///
/// It implements the whole contract (fencing tokens, leases, renewal, at-risk and lost
/// signals, release on drop) with a mutex and a map, so it is the reference for what the
/// network backends must do and a fast double for unit tests. Each name keeps a small entry
/// for its fencing counter for the life of the service.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> lock_core::Result<()> {
/// use lock_core::{DistributedLockExt, LockName, MemoryLock};
///
/// let locks = MemoryLock::new();
/// let guard = locks.acquire("jobs/nightly").await?;
/// // Tests can take a hold away behind its holder's back, as an operator might.
/// assert!(locks.sever(&LockName::new("jobs/nightly")?));
/// assert!(guard.release().await.is_err(), "the severed hold is no longer ours");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemoryLock {
    shared: Arc<Shared>,
    defaults: AcquireOptions,
}

impl MemoryLock {
    /// A new, empty lock service.
    pub fn new() -> Self {
        Self::default()
    }

    /// The service a `memory://NAME[?lease=..&wait=..]` URL names: every URL with the same
    /// `NAME` in this process shares one, so it stands in for a server in tests.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a malformed URL, a
    /// missing name or an unknown parameter.
    pub fn from_url(url: &str) -> Result<Self> {
        let mut url = LockUrl::parse(url)?;
        let service = ServiceOptions::default().resolve(&mut url)?;
        url.finish(&ServiceOptions::KEYS)?;
        let shape = (
            url.scheme(),
            url.user(),
            url.password(),
            url.hosts(),
            url.path(),
        );
        let ("memory", None, None, [host], "") = shape else {
            return Err(url.invalid("write memory://NAME: one name, no user, port or path"));
        };
        if host.port.is_some() {
            return Err(url.invalid("write memory://NAME: one name, no user, port or path"));
        }
        let name = host.name.clone();
        Ok(Self {
            shared: registry::shared(&name),
            defaults: service.defaults,
        })
    }

    /// How long the current hold on `name` lasts if nobody renews it; `None` when it is free.
    /// Tests compare it with what a guard counts on.
    pub fn lease_left(&self, name: &LockName) -> Option<std::time::Duration> {
        self.shared.lease_left(name)
    }

    /// Drops the current hold on `name` behind its holder's back, as an administrator deleting
    /// the key would; the holder's lost signal fires at its next renewal. Returns whether there
    /// was a hold.
    pub fn sever(&self, name: &LockName) -> bool {
        self.shared.sever(name)
    }

    /// Drops every semaphore permit, read-write hold and leadership on `name` behind their
    /// holders' backs; their lost signals fire at their next renewal. Returns how many holds
    /// there were.
    pub fn sever_claims(&self, name: &LockName) -> usize {
        let mut entries = claims::lock(&self.shared.claims);
        let mut severed = 0;
        for kind in [
            claims::Kind::Semaphore,
            claims::Kind::RwLock,
            claims::Kind::Election,
        ] {
            if let Some(entry) = entries.get_mut(&(kind, name.clone())) {
                severed += entry.holders.len();
                entry.holders.clear();
                entry.changed();
            }
        }
        severed
    }
}

#[async_trait]
impl DistributedLock for MemoryLock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        crate::backend::acquire(&self.shared, name, options).await
    }

    async fn acquire_claim_with(
        &self,
        name: &LockName,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        claim.validate()?;
        let steps = Arc::new(ClaimSteps {
            entries: Arc::clone(&self.shared.claims),
            claim,
            kind: claims::Kind::of(claim),
            leases: self.shared.leases.clone(),
        });
        crate::backend::acquire(&steps, name, options).await
    }

    /// A write claim on the name's election entry, whose holder's label is the leader's
    /// value; grants and new labels signal the entry's observers.
    async fn campaign_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let steps = Arc::new(ClaimSteps {
            entries: Arc::clone(&self.shared.claims),
            claim: Claim::Write,
            kind: claims::Kind::Election,
            leases: self.shared.leases.clone(),
        });
        crate::backend::acquire(&steps, name, options).await
    }

    async fn read_leader(&self, name: &LockName) -> Result<Option<Leader>> {
        Ok(election::leader(&self.shared.claims, name))
    }

    async fn watch_leader(&self, name: &LockName) -> Result<LeaderTicks> {
        Ok(election::ticks(Arc::clone(&self.shared.claims), name))
    }

    fn backend(&self) -> &'static str {
        "memory"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .with_fencing()
            .with_lost_detection()
            .with_lease_renewal()
            .with_server_side_wait()
            .with_semaphore()
            .with_rw_lock()
            .with_election()
    }

    fn default_options(&self) -> AcquireOptions {
        self.defaults.clone()
    }

    async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        Ok(self.shared.status(name))
    }

    async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        Ok(self.shared.held_names(prefix))
    }

    async fn force_release(&self, name: &LockName, fencing_token: u64) -> Result<bool> {
        Ok(self.shared.force_release(name, fencing_token))
    }

    fn service_identity(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }
}
