//! The in-memory backend: the reference semantics, and a test double for users.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until};

use crate::{AcquireOptions, Capabilities, DistributedLock, HeldLock, LockGuard, LockName, Result};

/// Locks shared by everything in this process that clones one `MemoryLock`.
///
/// It implements the whole contract (fencing tokens, leases, renewal, lost signal, release on
/// drop) with a mutex and a map, so it is the reference for what the network backends must do
/// and a fast double for unit tests. Each name keeps a small entry for its fencing counter for
/// the life of the service.
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
}

#[derive(Debug, Default)]
struct Shared {
    entries: Mutex<HashMap<LockName, Entry>>,
}

#[derive(Debug, Default)]
struct Entry {
    /// The last fencing token granted for this name.
    fence: u64,
    holder: Option<Holder>,
    /// Wakes waiters when the holder releases.
    released: Arc<Notify>,
}

#[derive(Debug)]
struct Holder {
    owner: u128,
    lease_end: Instant,
}

impl Entry {
    /// The current holder, treating an expired lease as no holder.
    fn live_holder(&mut self, now: Instant) -> Option<&mut Holder> {
        if self
            .holder
            .as_ref()
            .is_some_and(|holder| holder.lease_end <= now)
        {
            self.holder = None;
        }
        self.holder.as_mut()
    }
}

impl Shared {
    fn entries(&self) -> MutexGuard<'_, HashMap<LockName, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl MemoryLock {
    /// A new, empty lock service.
    pub fn new() -> Self {
        Self::default()
    }

    /// Drops the current hold on `name` behind its holder's back, as an administrator deleting
    /// the key would; the holder's lost signal fires at its next renewal. Returns whether there
    /// was a hold.
    pub fn sever(&self, name: &LockName) -> bool {
        let mut entries = self.shared.entries();
        let Some(entry) = entries.get_mut(name) else {
            return false;
        };
        let severed = entry.holder.take().is_some();
        entry.released.notify_waiters();
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
        options.validate()?;
        let deadline = options.wait.map(|wait| Instant::now() + wait);
        loop {
            let released = {
                let mut entries = self.shared.entries();
                let entry = entries.entry(name.clone()).or_default();
                let now = Instant::now();
                match entry.live_holder(now) {
                    None => {
                        let owner = rand::random::<u128>();
                        entry.fence += 1;
                        entry.holder = Some(Holder {
                            owner,
                            lease_end: now + options.lease,
                        });
                        let held = Arc::new(MemoryHeld {
                            shared: Arc::clone(&self.shared),
                            name: name.clone(),
                            owner,
                        });
                        let guard = LockGuard::builder(name.clone(), entry.fence, held)
                            .backend("memory")
                            .lease(now, options.lease, options.auto_renew);
                        drop(entries);
                        return Ok(Some(guard.build()));
                    }
                    Some(holder) => {
                        let lease_end = holder.lease_end;
                        (Arc::clone(&entry.released), lease_end)
                    }
                }
            };
            let (released, lease_end) = released;
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Ok(None);
            }
            let wake_at = deadline.map_or(lease_end, |deadline| deadline.min(lease_end));
            let notified = released.notified();
            // Re-check after registering so a release between the check and here is not missed.
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self
                .shared
                .entries()
                .get_mut(name)
                .is_some_and(|e| e.live_holder(Instant::now()).is_none())
            {
                continue;
            }
            tokio::select! {
                () = notified => {}
                () = sleep_until(wake_at) => {}
            }
        }
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
    }
}

/// One hold on a [`MemoryLock`] name.
#[derive(Debug)]
struct MemoryHeld {
    shared: Arc<Shared>,
    name: LockName,
    owner: u128,
}

impl MemoryHeld {
    /// Runs `action` on the holder if it is still ours; `false` otherwise.
    fn with_own_hold(&self, action: impl FnOnce(&mut Entry)) -> bool {
        let mut entries = self.shared.entries();
        let Some(entry) = entries.get_mut(&self.name) else {
            return false;
        };
        let ours = entry
            .live_holder(Instant::now())
            .is_some_and(|holder| holder.owner == self.owner);
        if ours {
            action(entry);
        }
        ours
    }
}

#[async_trait]
impl HeldLock for MemoryHeld {
    async fn release(&self) -> Result<bool> {
        Ok(self.with_own_hold(|entry| {
            entry.holder = None;
            entry.released.notify_waiters();
        }))
    }

    async fn renew(&self, lease: std::time::Duration) -> Result<bool> {
        Ok(self.with_own_hold(|entry| {
            if let Some(holder) = entry.holder.as_mut() {
                holder.lease_end = Instant::now() + lease;
            }
        }))
    }
}
