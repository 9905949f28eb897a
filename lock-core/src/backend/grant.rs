//! What a backend hands the engine when a try succeeds.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::backend::HeldLock;
use crate::backend::Leases;
use crate::backend::lease::{Lease, LeaseTerms};
use crate::backend::watch::Watch;
use crate::guard::GuardParts;
use crate::{AcquireOptions, LockGuard, LockHandle, LockName, telemetry};

/// A successful try: the fencing token, the hold's server side, and its lease.
///
/// By default the lease is the one the options ask for, renewed as they say, and extendable.
/// A backend whose server fixes the lease (a ZooKeeper session) names its length with
/// [`fixed_lease`](Grant::fixed_lease).
#[derive(Debug)]
pub struct Grant {
    fencing_token: u64,
    held: Arc<dyn HeldLock>,
    sent: Instant,
    fixed_lease: Option<Duration>,
    lost: Option<CancellationToken>,
}

impl Grant {
    /// A grant with fencing token `fencing_token`, made by a request sent at `sent` (the lease
    /// runs from then, as far as the holder may assume).
    pub fn new(fencing_token: u64, held: Arc<dyn HeldLock>, sent: Instant) -> Self {
        Self {
            fencing_token,
            held,
            sent,
            fixed_lease: None,
            lost: None,
        }
    }

    /// The server keeps the hold alive for `length` after each sign of life, whatever the
    /// options say: the engine confirms it every third of `length` (through
    /// [`HeldLock::renew`]) and the guard cannot [`extend`](LockGuard::extend) it.
    #[must_use]
    pub fn fixed_lease(mut self, length: Duration) -> Self {
        self.fixed_lease = Some(length);
        self
    }

    /// A lost signal the backend fires itself (a deleted node, an expired session), besides
    /// the one the lease scheduler fires.
    #[must_use]
    pub fn lost(mut self, lost: CancellationToken) -> Self {
        self.lost = Some(lost);
        self
    }

    /// The guard for this grant of `name`, its lease watched by `leases` as `options` say.
    /// Must run in a tokio runtime (the scheduler's task starts on it, if it has not yet).
    pub fn into_guard(
        self,
        name: LockName,
        backend: &'static str,
        options: &AcquireOptions,
        leases: &Leases,
    ) -> LockGuard {
        let lost = self.lost.unwrap_or_default();
        let at_risk = lost.child_token();
        let length = self.fixed_lease.unwrap_or(options.lease);
        let handle = LockHandle::new(name, self.fencing_token, lost.clone());
        let lease = Arc::new(Lease::new(LeaseTerms {
            sent: self.sent,
            length,
            drift: options.clock_drift,
            at_risk: options.at_risk,
            max_hold: options.hold_limit(),
            backend,
            handle,
        }));
        let watch = leases.watch(Watch::new(
            Arc::clone(&lease),
            Arc::clone(&self.held),
            self.fixed_lease.is_some() || options.auto_renew,
            at_risk.clone(),
            lost,
        ));
        telemetry::hold_started(backend);
        LockGuard::from_parts(GuardParts {
            held: self.held,
            lease,
            at_risk,
            extendable: self.fixed_lease.is_none(),
            watch,
        })
    }
}
