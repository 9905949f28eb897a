//! The in-memory backend's steps: a map of names to holders under one mutex, a `Notify` per
//! name as its push source.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::held::MemoryHeld;
use crate::backend::{Busy, Deadline, Grant, LockSteps, Try};
use crate::{AcquireOptions, LockName, Result};

/// Every name's entry, under one mutex.
pub(super) type Entries = Mutex<HashMap<LockName, Entry>>;

/// The state every clone of one service shares; holds keep the map alive.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    entries: Arc<Entries>,
    /// Semaphores and read-write locks.
    pub(super) claims: Arc<super::claims::ClaimEntries>,
    pub(super) leases: crate::backend::Leases,
}

#[derive(Debug, Default)]
pub(super) struct Entry {
    /// The last fencing token granted for this name.
    pub(super) fence: u64,
    pub(super) holder: Option<Holder>,
    /// Wakes waiters when the holder releases.
    pub(super) released: Arc<Notify>,
    /// Acquisitions waiting for this name now.
    pub(super) waiters: u64,
}

#[derive(Debug)]
pub(super) struct Holder {
    pub(super) owner: u128,
    pub(super) lease_end: Instant,
    pub(super) label: Arc<str>,
    pub(super) granted_at: std::time::SystemTime,
}

impl Entry {
    /// The current holder, treating an expired lease as no holder.
    pub(super) fn live_holder(&mut self, now: Instant) -> Option<&mut Holder> {
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

/// A lease end `lease` after `now`; a lease past the clock's range never ends.
pub(super) fn lease_end(now: Instant, lease: Duration) -> Instant {
    now.checked_add(lease)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365 * 30))
}

/// The map, locked (a panic elsewhere cannot leave it inconsistent: every change is one step).
pub(super) fn lock(entries: &Entries) -> MutexGuard<'_, HashMap<LockName, Entry>> {
    entries.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(super) fn entries(&self) -> MutexGuard<'_, HashMap<LockName, Entry>> {
        lock(&self.entries)
    }

    pub(super) fn sever(&self, name: &LockName) -> bool {
        let mut entries = self.entries();
        let Some(entry) = entries.get_mut(name) else {
            return false;
        };
        let severed = entry.holder.take().is_some();
        entry.released.notify_waiters();
        severed
    }

    pub(super) fn lease_left(&self, name: &LockName) -> Option<Duration> {
        let now = Instant::now();
        let mut entries = self.entries();
        let holder = entries.get_mut(name)?.live_holder(now)?;
        Some(holder.lease_end - now)
    }

    fn is_free(&self, name: &LockName) -> bool {
        self.entries()
            .get_mut(name)
            .is_none_or(|entry| entry.live_holder(Instant::now()).is_none())
    }
}

/// One acquisition: the name, its lease and label, and once it was found held, the name's
/// wake-up and its place among the waiters.
#[derive(Debug)]
pub(crate) struct Attempt {
    name: LockName,
    lease: Duration,
    label: Arc<str>,
    released: Option<Arc<Notify>>,
    waiting: Option<Waiting>,
}

/// Counts one attempt among its name's waiters for as long as it lives.
#[derive(Debug)]
struct Waiting {
    entries: Arc<Entries>,
    name: LockName,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(entry) = lock(&self.entries).get_mut(&self.name) {
            entry.waiters = entry.waiters.saturating_sub(1);
        }
    }
}

#[async_trait]
impl LockSteps for Shared {
    type Attempt = Attempt;

    fn backend(&self) -> &'static str {
        "memory"
    }

    fn server(&self) -> &str {
        "memory"
    }

    fn leases(&self) -> &crate::backend::Leases {
        &self.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> Attempt {
        Attempt {
            name: name.clone(),
            lease: options.lease,
            label: Arc::clone(&options.owner_label),
            released: None,
            waiting: None,
        }
    }

    async fn try_once(&self, attempt: &mut Attempt) -> Result<Try> {
        let mut entries = self.entries();
        let entry = entries.entry(attempt.name.clone()).or_default();
        let now = Instant::now();
        if let Some(holder) = entry.live_holder(now) {
            let left = holder.lease_end - now;
            attempt.released = Some(Arc::clone(&entry.released));
            if attempt.waiting.is_none() {
                entry.waiters += 1;
                attempt.waiting = Some(Waiting {
                    entries: Arc::clone(&self.entries),
                    name: attempt.name.clone(),
                });
            }
            return Ok(Try::Busy(Busy::pushed().within(left)));
        }
        let owner = rand::random::<u128>();
        entry.fence += 1;
        entry.holder = Some(Holder {
            owner,
            lease_end: lease_end(now, attempt.lease),
            label: Arc::clone(&attempt.label),
            granted_at: std::time::SystemTime::now(),
        });
        let fence = entry.fence;
        drop(entries);
        // No longer waiting: the name's waiter count drops with the mark.
        attempt.waiting = None;
        let held = MemoryHeld::new(Arc::clone(&self.entries), attempt.name.clone(), owner);
        Ok(Try::Granted(Grant::new(fence, Arc::new(held), now)))
    }

    async fn wait(&self, attempt: &mut Attempt, until: Deadline) {
        let Some(released) = attempt.released.clone() else {
            return until.sleep().await;
        };
        let notified = released.notified();
        tokio::pin!(notified);
        // Registered before the re-check, so a release in between is not missed.
        notified.as_mut().enable();
        if self.is_free(&attempt.name) {
            return;
        }
        tokio::select! {
            () = notified => {}
            () = until.sleep() => {}
        }
    }

    async fn clean_up(&self, _attempt: &mut Attempt) -> Result<()> {
        Ok(())
    }

    /// A try changes the map under its mutex, without awaiting: it cannot be interrupted
    /// half-way, so a dropped acquisition leaves nothing behind.
    fn needs_cleanup(&self, _attempt: &Attempt) -> bool {
        false
    }
}
