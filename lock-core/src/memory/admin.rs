//! What an operator can see and do on a [`MemoryLock`](super::MemoryLock): inspect, list,
//! force-release.

use tokio::time::Instant;

use super::steps::Shared;
use crate::{HolderInfo, LockName, LockStatus};

impl Shared {
    pub(super) fn status(&self, name: &LockName) -> LockStatus {
        let now = Instant::now();
        let mut entries = self.entries();
        let Some(entry) = entries.get_mut(name) else {
            return LockStatus::default();
        };
        let fence = entry.fence;
        let waiters = entry.waiters;
        let holders = entry
            .live_holder(now)
            .map(|holder| {
                HolderInfo::new(&*holder.label, fence)
                    .granted_at(holder.granted_at)
                    .lease_left(holder.lease_end.saturating_duration_since(now))
            })
            .into_iter()
            .collect();
        LockStatus::new(holders, waiters)
    }

    pub(super) fn held_names(&self, prefix: &str) -> Vec<LockName> {
        let now = Instant::now();
        let mut names: Vec<LockName> = self
            .entries()
            .iter_mut()
            .filter_map(|(name, entry)| {
                let held = name.as_str().starts_with(prefix) && entry.live_holder(now).is_some();
                held.then(|| name.clone())
            })
            .collect();
        names.sort();
        names
    }

    /// Ends the live hold on `name` if its fencing token is `fencing_token`.
    pub(super) fn force_release(&self, name: &LockName, fencing_token: u64) -> bool {
        let mut entries = self.entries();
        let Some(entry) = entries.get_mut(name) else {
            return false;
        };
        let current = entry.fence;
        if current != fencing_token || entry.live_holder(Instant::now()).is_none() {
            return false;
        }
        entry.holder = None;
        entry.released.notify_waiters();
        true
    }
}
