//! A won election: the hold on the election object, its epoch and its published value.

use std::fmt;

use tokio_util::sync::CancellationToken;

use crate::owner_label::validate_owner_label;
use crate::{LockGuard, LockName, Result};

/// Leadership of one election, from [`campaign`](crate::ElectionExt::campaign) until
/// [`resign`](Leadership::resign), a drop, or its loss.
///
/// It is a hold like any other: renewed in the background, with the same at-risk and lost
/// signals. Stamp every write made as leader with [`epoch`](Leadership::epoch): it rises with
/// every new leader, so a store that keeps the highest epoch it saw refuses a deposed leader's
/// late writes. Dropping it resigns in the background.
#[must_use = "dropping the leadership resigns at once (in the background)"]
pub struct Leadership {
    guard: LockGuard,
    value: String,
}

impl Leadership {
    pub(crate) fn new(guard: LockGuard, value: String) -> Self {
        Self { guard, value }
    }

    /// The election's name.
    pub fn name(&self) -> &LockName {
        self.guard.name()
    }

    /// This leadership's epoch: its fencing token, above every earlier leader's.
    pub fn epoch(&self) -> u64 {
        self.guard.fencing_token()
    }

    /// The value this leader publishes now.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Fires when the store no longer vouches for this leadership, before another candidate
    /// can be granted it (see [`LockGuard::lost`]).
    pub fn lost(&self) -> &CancellationToken {
        self.guard.lost()
    }

    /// Whether [`lost`](Leadership::lost) has fired.
    pub fn is_lost(&self) -> bool {
        self.guard.is_lost()
    }

    /// Fires when renewals are failing and little of the lease is left: stop leading work
    /// now (see [`LockGuard::at_risk`]).
    pub fn at_risk(&self) -> &CancellationToken {
        self.guard.at_risk()
    }

    /// The hold underneath, for what the leadership does not repeat (lease left, handle).
    pub fn guard(&self) -> &LockGuard {
        &self.guard
    }

    /// Publishes `value` in place of the current one, for [`leader`](crate::ElectionExt::leader)
    /// and observers, under the same epoch.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the store keeps either the old value or the new one, and
    /// [`value`](Leadership::value) changes only once the store took the new one.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a value that is no valid owner label (before any I/O); `Lost` once
    /// the leadership is gone (its lost signal fires then if it had not); `Unsupported` where
    /// the backend cannot change a published value; otherwise the backend's errors.
    pub async fn proclaim(&mut self, value: impl Into<String>) -> Result<()> {
        let value = value.into();
        validate_owner_label(&value)?;
        self.guard.relabel(&value).await?;
        self.value = value;
        Ok(())
    }

    /// Resigns: the next candidate in line leads.
    ///
    /// # Cancel safety
    ///
    /// As [`LockGuard::release`]: a resignation dropped midway finishes in the background.
    ///
    /// # Errors
    ///
    /// As [`LockGuard::release`]: `NotHeld` if the leadership was lost before.
    pub async fn resign(self) -> Result<()> {
        self.guard.release().await
    }

    /// The hold underneath, for code that treats a leadership like any other hold (releasing
    /// the guard resigns).
    pub fn into_guard(self) -> LockGuard {
        self.guard
    }
}

impl fmt::Debug for Leadership {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Leadership")
            .field("name", self.name())
            .field("epoch", &self.epoch())
            .field("value", &self.value)
            .field("lost", &self.is_lost())
            .finish()
    }
}
