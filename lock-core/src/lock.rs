//! The contract every backend implements.

use std::fmt;

use async_trait::async_trait;

use crate::{
    AcquireOptions, Capabilities, Claim, Error, ErrorKind, Leader, LeaderTicks, LockGuard,
    LockName, LockStatus, Result,
};

/// A distributed lock service: one backend connection that can lock any number of names.
///
/// Backends implement only [`acquire_with`](DistributedLock::acquire_with) (one call to the
/// engine, [`backend::acquire`](crate::backend::acquire)); the conveniences
/// (`acquire`, `try_acquire`, `acquire_timeout`, `with_lock`, ...) live once in
/// [`DistributedLockExt`](crate::DistributedLockExt). The trait is object safe, so a backend can
/// be chosen at run time as `Arc<dyn DistributedLock>`.
#[async_trait]
pub trait DistributedLock: Send + Sync + fmt::Debug {
    /// Acquires `name`, waiting up to `options.wait` while it is held elsewhere.
    ///
    /// Returns `Ok(Some(guard))` on a grant and `Ok(None)` when the wait ended with the lock
    /// still held elsewhere.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future at any await point leaves no lock held and no waiter
    /// entry behind, beyond an immediate background cleanup.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for invalid options (before
    /// any I/O), [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) when the server cannot
    /// be reached within the configured timeout, [`ErrorKind::Backend`](crate::ErrorKind::Backend)
    /// for other server errors.
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>>;

    /// Acquires a shared hold on `name` as `claim` says: one permit of a counting semaphore, or
    /// a read or write hold of a read-write lock, waiting up to `options.wait`. The guard is
    /// the mutex's: a fencing token (from the object's one counter, whatever the claim), lease
    /// renewal, at-risk and lost signals, release. The conveniences are
    /// [`SemaphoreExt`](crate::SemaphoreExt) and [`RwLockExt`](crate::RwLockExt); the backend
    /// says whether it offers each in [`Capabilities`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`acquire_with`](DistributedLock::acquire_with).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] where the backend has no such primitive (the default);
    /// [`ErrorKind::InvalidInput`] for an invalid claim or a semaphore limit that differs from
    /// its holders'; otherwise as [`acquire_with`](DistributedLock::acquire_with).
    async fn acquire_claim_with(
        &self,
        name: &LockName,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let _ = (name, options);
        Err(unsupported(self.backend(), claim.kind()))
    }

    /// Campaigns for the election `name`: an exclusive hold on the name's election object
    /// (apart from the mutex and the other objects of that name), candidates served in arrival
    /// order, waiting up to `options.wait`. `options.owner_label` is the value the leader
    /// publishes; the guard's fencing token is the leadership's epoch. The conveniences are
    /// [`ElectionExt`](crate::ElectionExt); [`Capabilities::election`] says whether a backend
    /// offers elections.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`acquire_with`](DistributedLock::acquire_with).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] where the backend has no elections (the default); otherwise
    /// as [`acquire_with`](DistributedLock::acquire_with).
    async fn campaign_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let _ = (name, options);
        Err(unsupported(self.backend(), "elections"))
    }

    /// The election `name`'s leader as the store shows it now: its published value, epoch
    /// and term; `None` while nobody leads.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] where the backend has no elections (the default), and the
    /// backend's errors.
    async fn read_leader(&self, name: &LockName) -> Result<Option<Leader>> {
        let _ = name;
        Err(unsupported(self.backend(), "elections"))
    }

    /// A stream that yields whenever the election `name`'s leader or its value may have
    /// changed, pushed by the store (a watch, a channel, a notification). It may yield when
    /// nothing changed, and ends when its connection does; an observer then subscribes again
    /// and re-reads, so a push lost with a connection loses no change.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future or the stream unsubscribes.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] where the backend has no elections (the default), and the
    /// backend's errors.
    async fn watch_leader(&self, name: &LockName) -> Result<LeaderTicks> {
        let _ = name;
        Err(unsupported(self.backend(), "elections"))
    }

    /// The backend's short name: `"memory"`, `"redis"`, `"zookeeper"`, `"postgres"`, ...
    fn backend(&self) -> &'static str;

    /// What this backend guarantees.
    fn capabilities(&self) -> Capabilities;

    /// The options the conveniences of [`DistributedLockExt`](crate::DistributedLockExt)
    /// start from: the service's defaults (its URL's `lease`, `wait`, ... parameters), or
    /// [`AcquireOptions::default`].
    fn default_options(&self) -> AcquireOptions {
        AcquireOptions::default()
    }

    /// Who holds `name` now (owner label, fencing token, grant time, lease left) and how many
    /// acquisitions wait for it, as the server shows it: for operators and dashboards, not
    /// for deciding whether to acquire (the answer may be stale as soon as it arrives).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] where the backend cannot tell (the default), and the
    /// backend's errors, as for [`acquire_with`](DistributedLock::acquire_with).
    async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        let _ = name;
        Err(unsupported(self.backend(), "inspect"))
    }

    /// The names held now that start with `prefix` (`""`: every held name), sorted.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] where the backend cannot list (the default), and the
    /// backend's errors.
    async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        let _ = prefix;
        Err(unsupported(self.backend(), "list"))
    }

    /// Ends the hold on `name` whose fencing token is `fencing_token`, behind its holder's
    /// back: an operator's way out of a stuck holder. Returns `Ok(true)` when that hold was
    /// live and is released (its holder's lost signal fires at its next renewal or watch
    /// event; waiters are woken), `Ok(false)` when that token no longer holds: a newer
    /// holder's lock is never touched.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the release happens on the server in one step or not at all. A request
    /// already sent when the future is dropped may still take effect shortly afterwards.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] where the backend cannot (the default), and the backend's
    /// errors.
    async fn force_release(&self, name: &LockName, fencing_token: u64) -> Result<bool> {
        let _ = (name, fencing_token);
        Err(unsupported(self.backend(), "force_release"))
    }

    /// Identifies the lock service for same-task re-entry of `with_lock`: clones of one service
    /// (which share its connections and holds) must return the same value, distinct services
    /// different ones. The default, the object's address, suits services that are not cloned.
    fn service_identity(&self) -> usize {
        std::ptr::from_ref(self).cast::<()>() as usize
    }
}

fn unsupported(backend: &'static str, operation: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!("the {backend} backend does not support {operation}"),
    )
}
