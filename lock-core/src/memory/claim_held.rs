//! One semaphore permit or read-write hold in memory.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::claims::{ClaimEntries, ClaimEntry, Key, lock};
use super::steps::lease_end;
use crate::Result;
use crate::backend::HeldLock;

#[derive(Debug)]
pub(super) struct ClaimHeld {
    entries: Arc<ClaimEntries>,
    key: Key,
    owner: u128,
}

impl ClaimHeld {
    pub(super) fn new(entries: Arc<ClaimEntries>, key: Key, owner: u128) -> Self {
        Self {
            entries,
            key,
            owner,
        }
    }

    /// Runs `action` on the entry and our holder's index if the hold is still ours.
    fn with_own_hold(&self, action: impl FnOnce(&mut ClaimEntry, usize)) -> bool {
        let mut entries = lock(&self.entries);
        let Some(entry) = entries.get_mut(&self.key) else {
            return false;
        };
        entry.expire(Instant::now());
        let Some(index) = entry.holders.iter().position(|h| h.owner == self.owner) else {
            return false;
        };
        action(entry, index);
        true
    }
}

#[async_trait]
impl HeldLock for ClaimHeld {
    async fn release(&self) -> Result<bool> {
        Ok(self.with_own_hold(|entry, index| {
            entry.holders.swap_remove(index);
            entry.changed();
        }))
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        Ok(self.with_own_hold(|entry, index| {
            entry.holders[index].lease_end = lease_end(Instant::now(), lease);
        }))
    }

    async fn relabel(&self, label: &str) -> Result<bool> {
        Ok(self.with_own_hold(|entry, index| {
            entry.holders[index].label = Arc::from(label);
            entry.changed();
        }))
    }
}
