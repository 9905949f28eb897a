//! The guard a successful acquisition returns.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::backend::lease::Lease;
use crate::backend::leases::Registration;
use crate::backend::{HeldLock, Sending};
use crate::{AcquireOptions, Error, ErrorKind, LockHandle, LockName, Result, telemetry};

/// Proof of a hold on a distributed lock.
///
/// Release it with [`release`](LockGuard::release) to learn whether the hold lasted. Dropping the
/// guard releases in the background instead: best-effort and not immediate, like sqlx's advisory
/// lock guards; if that release cannot reach the server, the lease (or ZooKeeper session) ends
/// the hold.
///
/// Three signals tell how the hold stands: [`at_risk`](LockGuard::at_risk) fires when renewals
/// are failing or late and less than a share of the lease is left (stop work that must not
/// outlive the hold now); [`lost`](LockGuard::lost) fires when the backend no longer vouches for
/// the hold, after which another process may hold the lock. Pass
/// [`fencing_token`](LockGuard::fencing_token) to the resource you protect so it can reject
/// writes from a holder that was too slow to notice.
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
///     () = guard.at_risk().cancelled() => { /* stop: the hold may end soon */ }
///     () = async { /* the work, writing with guard.fencing_token() */ } => {}
/// }
/// guard.release().await?;
/// # Ok(())
/// # }
/// ```
#[must_use = "dropping the guard releases the lock at once (in the background)"]
#[clippy::has_significant_drop]
pub struct LockGuard {
    // The name, fencing token, lost signal and backend are the lease's: kept once per hold.
    held: Option<Arc<dyn HeldLock>>,
    lease: Arc<Lease>,
    at_risk: CancellationToken,
    extendable: bool,
    watch: Registration,
    granted: Instant,
}

/// Everything a guard is made of, assembled by [`Grant`](crate::backend::Grant).
pub(crate) struct GuardParts {
    pub(crate) held: Arc<dyn HeldLock>,
    pub(crate) lease: Arc<Lease>,
    pub(crate) at_risk: CancellationToken,
    pub(crate) extendable: bool,
    pub(crate) watch: Registration,
}

impl LockGuard {
    pub(crate) fn from_parts(parts: GuardParts) -> Self {
        Self {
            held: Some(parts.held),
            lease: parts.lease,
            at_risk: parts.at_risk,
            extendable: parts.extendable,
            watch: parts.watch,
            granted: Instant::now(),
        }
    }

    /// The lock's name.
    pub fn name(&self) -> &LockName {
        self.lease.handle().name()
    }

    /// The fencing token of this grant: larger than that of every earlier grant of this name.
    pub fn fencing_token(&self) -> u64 {
        self.lease.handle().fencing_token()
    }

    /// Fires when the backend no longer vouches for the hold: renewal found it gone, the local
    /// clock passed the last confirmed lease end (less the clock drift margin), the node was
    /// deleted, or the session ended. Never fires because of a normal release.
    pub fn lost(&self) -> &CancellationToken {
        self.lease.handle().lost()
    }

    /// Whether [`lost`](LockGuard::lost) has fired.
    pub fn is_lost(&self) -> bool {
        self.lease.handle().is_lost()
    }

    /// Fires when less than the [at-risk share](AcquireOptions::at_risk) of the lease is left
    /// because renewals are failing or late, and at the latest when the hold is lost. Once
    /// fired it stays fired, even if a later renewal succeeds: work stopped on it should be
    /// restarted under a new hold. [`valid_for`](LockGuard::valid_for) tells the current state.
    pub fn at_risk(&self) -> &CancellationToken {
        &self.at_risk
    }

    /// Whether [`at_risk`](LockGuard::at_risk) has fired.
    pub fn is_at_risk(&self) -> bool {
        self.at_risk.is_cancelled()
    }

    /// Whether the last attempt to renew (or, on ZooKeeper, to confirm) the hold failed: the
    /// backend cannot vouch for it right now, but may again before the lease ends.
    pub fn is_suspended(&self) -> bool {
        self.lease.is_failing()
    }

    /// Until when the server holds the lock for this guard, by the local monotonic clock: the
    /// last confirmed lease end less the clock drift margin and the
    /// [signal allowance](AcquireOptions::signal_allowance).
    pub fn valid_until(&self) -> Instant {
        self.lease.valid_until()
    }

    /// When the hold becomes [at risk](LockGuard::at_risk) unless a renewal succeeds before:
    /// [`valid_until`](LockGuard::valid_until) less the at-risk share of the lease. A process
    /// that cannot watch the guard (a supervisor) can act on this instant alone.
    pub fn at_risk_at(&self) -> Instant {
        self.lease.at_risk_at()
    }

    /// How long the hold is confirmed to last from now (zero once that time has passed or the
    /// hold is lost).
    pub fn valid_for(&self) -> Duration {
        if self.is_lost() {
            return Duration::ZERO;
        }
        self.valid_until().saturating_duration_since(Instant::now())
    }

    /// A cheap, cloneable view of this hold (name, fencing token, lost signal).
    pub fn handle(&self) -> LockHandle {
        self.lease.handle().clone()
    }

    /// Extends the lease to `lease` from now (later renewals keep that length), or to the
    /// hold's [`max_hold`](AcquireOptions::max_hold) if that comes first. Renewals of one
    /// hold never overlap: an extend waits for a background renewal in flight, so the lease end
    /// the guard records is always the one the server confirmed last. The request goes out at
    /// once, one round trip, not batched with the background renewals of other holds.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the lease is either extended or unchanged, and the guard stays valid. If
    /// the server extended it but the answer was dropped, the guard keeps the earlier (shorter)
    /// end: it never assumes more than the server granted.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unsupported`] on backends whose lease the server fixes (ZooKeeper),
    /// [`ErrorKind::InvalidInput`] for a lease out of range, [`ErrorKind::NotHeld`] after
    /// release, [`ErrorKind::Lost`] (and the lost signal fires) if the hold is no longer ours,
    /// or the server's error.
    pub async fn extend(&self, lease: Duration) -> Result<()> {
        let held = self
            .held
            .as_ref()
            .ok_or_else(|| self.context(Error::new(ErrorKind::NotHeld, "already released")))?;
        if !self.extendable {
            return Err(self.context(Error::new(
                ErrorKind::Unsupported,
                "this backend's lease is fixed by the server (the ZooKeeper session); it cannot be extended",
            )));
        }
        let options = AcquireOptions {
            lease,
            ..AcquireOptions::default()
        };
        options.validate()?;
        if self.is_lost() {
            return Err(self.context(lost_before_extend()));
        }
        let Some(lease) = self.lease.allowed(lease, Instant::now()) else {
            return Err(self.context(Error::new(
                ErrorKind::Lost,
                "the hold has reached its max_hold and cannot be extended",
            )));
        };
        let renewed = self.lease.renew(&**held, lease, Sending::AtOnce).await;
        if matches!(renewed, Ok(false)) {
            self.lease.handle().lost().cancel();
        }
        self.watch.changed();
        match renewed {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.context(lost_before_extend())),
            Err(error) => Err(self.context(error)),
        }
    }

    /// Replaces the hold's owner label on the server, if the hold is still ours: what
    /// [`Leadership::proclaim`](crate::Leadership::proclaim) publishes through. The label is
    /// validated by the caller.
    pub(crate) async fn relabel(&self, label: &str) -> Result<()> {
        let held = self
            .held
            .as_ref()
            .ok_or_else(|| self.context(Error::new(ErrorKind::NotHeld, "already released")))?;
        if self.is_lost() {
            return Err(self.context(lost_before_relabel()));
        }
        match held.relabel(label).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.lease.handle().lost().cancel();
                Err(self.context(lost_before_relabel()))
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
        self.watch.end();
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        telemetry::hold_ended(self.lease.backend(), self.granted.elapsed());
        let was_lost = self.is_lost();
        let span = telemetry::debug_span_if_seen!(
            "distlock.release",
            backend = self.lease.backend(),
            lock = %self.name(),
            fencing_token = self.fencing_token(),
            outcome = tracing::field::Empty,
        );
        // Runs inline (no task hop on the hot path); dropped half-way, it is redone in the
        // background by this guard.
        let mut unfinished = ReleaseIfDropped(Some(Arc::clone(&held)));
        let released = telemetry::in_span(&span, held.release()).await;
        unfinished.0 = None;
        match &released {
            Ok(true) => span.record("outcome", "released"),
            Ok(false) => span.record("outcome", "not_owner"),
            Err(error) => span.record("outcome", tracing::field::display(error)),
        };
        match released {
            Ok(true) if !was_lost => Ok(()),
            Ok(_) if was_lost => Err(self.context(Error::new(
                ErrorKind::NotHeld,
                "the hold was lost before release; another holder may have run meanwhile",
            ))),
            Ok(_) => {
                self.lease.handle().lost().cancel();
                telemetry::lost(
                    self.lease.backend(),
                    self.lease.handle(),
                    telemetry::LostCause::NotOwner,
                );
                Err(self.context(Error::new(
                    ErrorKind::NotHeld,
                    "the server shows the lock is no longer ours",
                )))
            }
            Err(error) => Err(self.context(error)),
        }
    }

    fn context(&self, error: Error) -> Error {
        error
            .with_backend(self.lease.backend())
            .with_lock(self.name())
    }
}

fn lost_before_extend() -> Error {
    Error::new(
        ErrorKind::Lost,
        "the hold was lost before it could be extended",
    )
}

fn lost_before_relabel() -> Error {
    Error::new(
        ErrorKind::Lost,
        "the hold was lost before its label could change",
    )
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        self.watch.end();
        if let Some(held) = self.held.take() {
            telemetry::hold_ended(self.lease.backend(), self.granted.elapsed());
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
            .field("backend", &self.lease.backend())
            .field("at_risk", &self.is_at_risk())
            .field("lost", &self.is_lost())
            .field("released", &self.held.is_none())
            .finish()
    }
}
