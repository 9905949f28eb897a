//! One hold on a [`MemoryLock`](super::MemoryLock) name.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::steps::{Entries, Entry, lease_end, lock};
use crate::backend::HeldLock;
use crate::{LockName, Result};

#[derive(Debug)]
pub(super) struct MemoryHeld {
    entries: Arc<Entries>,
    name: LockName,
    owner: u128,
}

impl MemoryHeld {
    pub(super) fn new(entries: Arc<Entries>, name: LockName, owner: u128) -> Self {
        Self {
            entries,
            name,
            owner,
        }
    }

    /// Runs `action` on the entry if the hold is still ours; `false` otherwise.
    fn with_own_hold(&self, action: impl FnOnce(&mut Entry)) -> bool {
        let mut entries = lock(&self.entries);
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

    async fn renew(&self, lease: Duration) -> Result<bool> {
        Ok(self.with_own_hold(|entry| {
            if let Some(holder) = entry.holder.as_mut() {
                holder.lease_end = lease_end(Instant::now(), lease);
            }
        }))
    }
}
