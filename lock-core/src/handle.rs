//! A cloneable view of a hold.

use tokio_util::sync::CancellationToken;

use crate::LockName;

/// A cheap, cloneable view of one hold: its name, fencing token and lost signal.
///
/// `with_lock_guarded` hands one to its closure; [`LockGuard::handle`](crate::LockGuard::handle)
/// makes one. It cannot release the lock.
#[derive(Clone, Debug)]
pub struct LockHandle {
    name: LockName,
    fencing_token: u64,
    lost: CancellationToken,
}

impl LockHandle {
    pub(crate) fn new(name: LockName, fencing_token: u64, lost: CancellationToken) -> Self {
        Self {
            name,
            fencing_token,
            lost,
        }
    }

    /// The lock's name.
    pub fn name(&self) -> &LockName {
        &self.name
    }

    /// The grant's fencing token (see [`LockGuard::fencing_token`](crate::LockGuard::fencing_token)).
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// The hold's lost signal (see [`LockGuard::lost`](crate::LockGuard::lost)).
    pub fn lost(&self) -> &CancellationToken {
        &self.lost
    }

    /// Whether the lost signal has fired.
    pub fn is_lost(&self) -> bool {
        self.lost.is_cancelled()
    }
}
