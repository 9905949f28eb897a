//! The guard a successful acquisition returns.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::lease::{Lease, spawn_monitor};
use crate::{Error, ErrorKind, HeldLock, LockHandle, LockName, Result};

/// Proof of a hold on a distributed lock.
///
/// Release it with [`release`](LockGuard::release) to learn whether the hold lasted. Dropping the
/// guard releases in the background instead: best-effort and not immediate, like sqlx's advisory
/// lock guards; if that release cannot reach the server, the lease (or ZooKeeper session) ends
/// the hold.
///
/// Watch [`lost`](LockGuard::lost): it fires when the backend stops vouching for the hold, after
/// which another process may hold the lock. Pass [`fencing_token`](LockGuard::fencing_token) to
/// the resource you protect so it can reject writes from a holder that was too slow.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> lock_core::Result<()> {
/// use lock_core::{DistributedLockExt, MemoryLock};
///
/// let locks = MemoryLock::new();
/// let guard = locks.acquire("jobs/nightly").await?;
/// tokio::select! {
///     () = guard.lost().cancelled() => { /* stop: another process may hold the lock now */ }
///     () = async { /* the work, writing with guard.fencing_token() */ } => {}
/// }
/// guard.release().await?;
/// # Ok(())
/// # }
/// ```
#[must_use = "dropping the guard releases the lock at once (in the background)"]
#[clippy::has_significant_drop]
pub struct LockGuard {
    handle: LockHandle,
    backend: &'static str,
    held: Option<Arc<dyn HeldLock>>,
    lease: Option<Arc<Lease>>,
    stop_monitor: CancellationToken,
}

impl LockGuard {
    /// Starts building a guard for a hold a backend was just granted.
    pub fn builder(
        name: LockName,
        fencing_token: u64,
        held: Arc<dyn HeldLock>,
    ) -> LockGuardBuilder {
        LockGuardBuilder {
            name,
            fencing_token,
            held,
            backend: "unknown",
            lost: None,
            lease: None,
        }
    }

    /// The lock's name.
    pub fn name(&self) -> &LockName {
        self.handle.name()
    }

    /// The fencing token of this grant: larger than that of every earlier grant of this name.
    /// Zero on backends without [`fencing`](crate::Capabilities::fencing).
    pub fn fencing_token(&self) -> u64 {
        self.handle.fencing_token()
    }

    /// Fires when the backend no longer vouches for the hold: renewal found it gone or kept
    /// failing, the local clock passed the last confirmed lease end, or the session expired.
    /// Never fires because of a normal release.
    pub fn lost(&self) -> &CancellationToken {
        self.handle.lost()
    }

    /// Whether [`lost`](LockGuard::lost) has fired.
    pub fn is_lost(&self) -> bool {
        self.handle.is_lost()
    }

    /// Whether the backend temporarily cannot vouch for the hold but may again (ZooKeeper: the
    /// connection is down but the session lives). Pause work that needs the lock until it clears.
    pub fn is_suspended(&self) -> bool {
        self.held.as_ref().is_some_and(|held| held.is_suspended())
    }

    /// A cheap, cloneable view of this hold (name, fencing token, lost signal).
    pub fn handle(&self) -> LockHandle {
        self.handle.clone()
    }

    /// Extends the lease to `lease` from now (later renewals keep that length).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the lease is either extended or unchanged, and the guard stays valid.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] on backends without leases, [`ErrorKind::Lost`] (and the lost
    /// signal fires) if the hold is no longer ours, or the server's error.
    pub async fn extend(&self, lease: Duration) -> Result<()> {
        let held = self
            .held
            .as_ref()
            .ok_or_else(|| self.context(Error::new(ErrorKind::NotHeld, "already released")))?;
        if lease < crate::AcquireOptions::MIN_LEASE {
            return Err(Error::invalid_input(format!(
                "lease {lease:?} is below the minimum"
            )));
        }
        if self.is_lost() {
            return Err(self.context(Error::new(
                ErrorKind::Lost,
                "the hold was lost before it could be extended",
            )));
        }
        let sent = Instant::now();
        match held.renew(lease).await {
            Ok(true) => {
                if let Some(monitor) = &self.lease {
                    monitor.confirm(sent, lease);
                }
                Ok(())
            }
            Ok(false) => {
                self.handle.lost().cancel();
                Err(self.context(Error::new(
                    ErrorKind::Lost,
                    "the hold was lost before it could be extended",
                )))
            }
            Err(error) => Err(self.context(error)),
        }
    }

    /// Releases the hold and reports whether it lasted until now.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: if this future is dropped before the server answered, the release runs
    /// again in the background (it compares by owner token, so a second run after a first that
    /// took effect changes nothing).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotHeld`] if the hold was lost before the release (the lost signal had fired
    /// or the server shows another owner); the server-side entry is removed only if it was still
    /// ours. [`ErrorKind::Unavailable`] or [`ErrorKind::Backend`] if the server could not be
    /// asked; the lease then ends the hold.
    pub async fn release(mut self) -> Result<()> {
        self.stop_monitor.cancel();
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        let was_lost = self.is_lost();
        // Runs inline (no task hop on the hot path); dropped half-way, it is redone in the
        // background by this guard.
        let mut unfinished = ReleaseIfDropped(Some(Arc::clone(&held)));
        let released = held.release().await;
        unfinished.0 = None;
        match released {
            Ok(true) if !was_lost => Ok(()),
            Ok(_) if was_lost => Err(self.context(Error::new(
                ErrorKind::NotHeld,
                "the hold was lost before release; another holder may have run meanwhile",
            ))),
            Ok(_) => {
                self.handle.lost().cancel();
                Err(self.context(Error::new(
                    ErrorKind::NotHeld,
                    "the server shows the lock is no longer ours",
                )))
            }
            Err(error) => Err(self.context(error)),
        }
    }

    fn context(&self, error: Error) -> Error {
        error.with_backend(self.backend).with_lock(self.name())
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        self.stop_monitor.cancel();
        if let Some(held) = self.held.take() {
            release_in_background(held);
        }
    }
}

/// Redoes a release in the background if the future running it is dropped before it finished.
struct ReleaseIfDropped(Option<Arc<dyn HeldLock>>);

impl Drop for ReleaseIfDropped {
    fn drop(&mut self) {
        if let Some(held) = self.0.take() {
            release_in_background(held);
        }
    }
}

/// Releases `held` in a task of its own: best-effort, the lease ends the hold if it fails.
fn release_in_background(held: Arc<dyn HeldLock>) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                if let Err(error) = held.release().await {
                    tracing::warn!(%error, ?held, "background release failed; the lease will end the hold");
                }
            });
        }
        Err(_) => tracing::warn!(
            ?held,
            "guard dropped outside a tokio runtime; the lease will end the hold"
        ),
    }
}

impl fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockGuard")
            .field("name", self.name())
            .field("fencing_token", &self.fencing_token())
            .field("backend", &self.backend)
            .field("lost", &self.is_lost())
            .field("released", &self.held.is_none())
            .finish()
    }
}

/// Assembles a [`LockGuard`]; used by backends right after a grant.
#[derive(Debug)]
pub struct LockGuardBuilder {
    name: LockName,
    fencing_token: u64,
    held: Arc<dyn HeldLock>,
    backend: &'static str,
    lost: Option<CancellationToken>,
    lease: Option<(Instant, Duration, bool)>,
}

impl LockGuardBuilder {
    /// Names the backend, for error context.
    #[must_use]
    pub fn backend(mut self, backend: &'static str) -> Self {
        self.backend = backend;
        self
    }

    /// Uses a lost signal the backend fires itself (for example on session expiry).
    #[must_use]
    pub fn lost(mut self, lost: CancellationToken) -> Self {
        self.lost = Some(lost);
        self
    }

    /// Monitors a lease of `length` granted by a request sent at `granted_at`, renewing it in the
    /// background when `auto_renew` is on. Needs [`HeldLock::renew`].
    #[must_use]
    pub fn lease(mut self, granted_at: Instant, length: Duration, auto_renew: bool) -> Self {
        self.lease = Some((granted_at, length, auto_renew));
        self
    }

    /// Builds the guard, starting the lease monitor if a lease was given.
    ///
    /// Must run inside a tokio runtime when a lease was given.
    pub fn build(self) -> LockGuard {
        let lost = self.lost.unwrap_or_default();
        let stop_monitor = CancellationToken::new();
        let lease = self.lease.map(|(granted_at, length, auto_renew)| {
            spawn_monitor(
                Arc::clone(&self.held),
                granted_at,
                length,
                auto_renew,
                lost.clone(),
                stop_monitor.clone(),
            )
        });
        LockGuard {
            handle: LockHandle::new(self.name, self.fencing_token, lost),
            backend: self.backend,
            held: Some(self.held),
            lease,
            stop_monitor,
        }
    }
}
