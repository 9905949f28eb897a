//! What an operator sees of a lock: who holds it, since when, for how long, and who waits.

use std::time::{Duration, SystemTime};

/// One lock's state on the server, as [`inspect`](crate::DistributedLock::inspect) reads it.
///
/// A free lock with nobody waiting has no holders and zero waiters
/// ([`is_idle`](LockStatus::is_idle)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockStatus {
    /// The current holders: at most one for a mutex.
    pub holders: Vec<HolderInfo>,
    /// How many acquisitions are waiting for the lock right now.
    pub waiters: u64,
}

impl LockStatus {
    /// A status with these holders and waiters.
    pub fn new(holders: Vec<HolderInfo>, waiters: u64) -> Self {
        Self { holders, waiters }
    }

    /// Nobody holds the lock and nobody waits for it.
    pub fn is_idle(&self) -> bool {
        self.holders.is_empty() && self.waiters == 0
    }
}

/// One hold as the server keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HolderInfo {
    /// The holder's [owner label](crate::AcquireOptions::owner_label).
    pub owner_label: String,
    /// The hold's fencing token: what [`force_release`](crate::DistributedLock::force_release)
    /// takes.
    pub fencing_token: u64,
    /// When the hold began, by the server's clock (on ZooKeeper: when the holder's node was
    /// made, which is when it joined the queue). `None` when the server does not say.
    pub granted_at: Option<SystemTime>,
    /// How long the server keeps the hold if its holder stops renewing. `None` where a
    /// session rather than a lease keeps it (ZooKeeper).
    pub lease_left: Option<Duration>,
}

impl HolderInfo {
    /// A holder labelled `owner_label` with `fencing_token`, its times unknown.
    pub fn new(owner_label: impl Into<String>, fencing_token: u64) -> Self {
        Self {
            owner_label: owner_label.into(),
            fencing_token,
            granted_at: None,
            lease_left: None,
        }
    }

    /// The same, granted at `at` by the server's clock.
    #[must_use]
    pub fn granted_at(mut self, at: SystemTime) -> Self {
        self.granted_at = Some(at);
        self
    }

    /// The same, with `left` of its lease to run.
    #[must_use]
    pub fn lease_left(mut self, left: Duration) -> Self {
        self.lease_left = Some(left);
        self
    }
}
