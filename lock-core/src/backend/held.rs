//! The backend's side of one hold: what a [`LockGuard`](crate::LockGuard) asks the server.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;

use crate::{Error, ErrorKind, Result};

/// One hold as the backend sees it: the server-side state a [`LockGuard`](crate::LockGuard) wraps.
///
/// Backends implement this; users never call it. Implementations compare by owner token, so a
/// call for a hold that is no longer ours changes nothing and answers `Ok(false)`. The engine
/// never runs two renewals of one hold at once.
#[async_trait]
pub trait HeldLock: Send + Sync + fmt::Debug + 'static {
    /// Releases the hold on the server.
    ///
    /// Returns `Ok(true)` when the hold was ours and is now released, `Ok(false)` when the server
    /// shows it is no longer ours (expired, taken over, deleted); nothing changed then.
    ///
    /// # Cancel safety
    ///
    /// May be dropped part-way: the guard then runs it again in the background. So a release
    /// whose first run already took effect must answer `Ok(false)` and change nothing, which
    /// comparing by owner token gives.
    ///
    /// # Errors
    ///
    /// The server could not be asked ([`ErrorKind::Unavailable`], [`ErrorKind::Backend`]).
    async fn release(&self) -> Result<bool>;

    /// Extends the hold to `lease` from now (a backend whose lease the server fixes, such as a
    /// ZooKeeper session, confirms that the hold is alive and ignores `lease`).
    ///
    /// Returns `Ok(true)` when the hold is still ours and was extended, `Ok(false)` when it is no
    /// longer ours.
    ///
    /// # Cancel safety
    ///
    /// Cancelling leaves the lease either extended or as it was; both are safe.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] by default; otherwise the server could not be asked.
    async fn renew(&self, lease: Duration) -> Result<bool> {
        let _ = lease;
        Err(Error::new(
            ErrorKind::Unsupported,
            "this backend has no lease to extend",
        ))
    }

    /// [`renew`](Self::renew) at the holder's request ([`LockGuard::extend`]), who waits for
    /// the answer: a backend that gathers the lease scheduler's renewals into batches sends
    /// this one at once instead. By default, [`renew`](Self::renew).
    ///
    /// [`LockGuard::extend`]: crate::LockGuard::extend
    ///
    /// # Cancel safety
    ///
    /// As [`renew`](Self::renew).
    ///
    /// # Errors
    ///
    /// As [`renew`](Self::renew).
    async fn extend(&self, lease: Duration) -> Result<bool> {
        self.renew(lease).await
    }

    /// Replaces the hold's owner label on the server (an election's published value) if the
    /// hold is still ours, in one step that checks the owner token.
    ///
    /// Returns `Ok(true)` when the label was replaced, `Ok(false)` when the hold is no longer
    /// ours; nothing changed then.
    ///
    /// # Cancel safety
    ///
    /// Cancelling leaves the label either replaced or as it was; both are safe.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] by default; otherwise the server could not be asked.
    async fn relabel(&self, label: &str) -> Result<bool> {
        let _ = label;
        Err(Error::new(
            ErrorKind::Unsupported,
            "this backend cannot change a hold's label",
        ))
    }
}
