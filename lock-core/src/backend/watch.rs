//! One hold as the lease scheduler sees it: when it is next due, and what is due then (a
//! renewal, the at-risk signal, the lost signal).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::Result;
use crate::backend::HeldLock;
use crate::backend::lease::Lease;
use crate::backend::leases::Renewal;
use crate::telemetry::{self, LostCause};

/// What the scheduler watches and signals for one hold.
pub(crate) struct Watch {
    pub(crate) lease: Arc<Lease>,
    pub(crate) held: Arc<dyn HeldLock>,
    /// Renew every third of the lease (never past the hold's `max_hold`).
    pub(crate) auto_renew: bool,
    pub(crate) at_risk: CancellationToken,
    pub(crate) lost: CancellationToken,
    next_renewal: Instant,
    /// Set once a renewal was cut to end at the `max_hold` limit: there is nothing left to
    /// renew, and the coming at-risk signal is the limit's, not a failure's.
    at_limit: bool,
    /// A renewal is in flight: its end decides what is due next.
    pub(crate) renewing: bool,
}

/// What is due for a hold at a given instant.
#[derive(Debug, PartialEq)]
pub(crate) enum Due {
    /// Nothing until then (always later than the instant asked about).
    Until(Instant),
    /// Renew now, for this length; the lease must not end before the answer comes.
    Renew(Duration),
    /// The hold is lost, for this reason.
    Lost(LostCause),
}

impl Watch {
    /// A watch of a hold granted just now: the first renewal is a third of the lease away.
    pub(crate) fn new(
        lease: Arc<Lease>,
        held: Arc<dyn HeldLock>,
        auto_renew: bool,
        at_risk: CancellationToken,
        lost: CancellationToken,
    ) -> Self {
        let next_renewal = Instant::now() + lease.length() / 3;
        Self {
            lease,
            held,
            auto_renew,
            at_risk,
            lost,
            next_renewal,
            at_limit: false,
            renewing: false,
        }
    }

    /// What is due at `now`. Fires the at-risk signal itself once less than the at-risk share
    /// of the lease is left. The lost signal is the caller's to fire (outside its locks).
    pub(crate) fn due(&mut self, now: Instant) -> Due {
        if self.lost.is_cancelled() {
            return Due::Lost(LostCause::Signalled);
        }
        let limit = self.lease.hold_until();
        if limit.is_some_and(|limit| now >= limit) {
            return Due::Lost(LostCause::MaxHold);
        }
        let state = self.lease.state();
        if now >= state.end {
            return Due::Lost(if self.at_limit {
                LostCause::MaxHold
            } else {
                LostCause::LeaseExpired
            });
        }
        let risk_at = self.lease.at_risk_at();
        if now >= risk_at && !self.at_risk.is_cancelled() {
            self.at_risk.cancel();
            let cause = match (self.at_limit, self.lease.is_failing()) {
                (true, _) => "max_hold",
                (false, true) => "renewal_failing",
                (false, false) => "renewal_late",
            };
            telemetry::at_risk(self.lease.backend(), self.lease.handle(), cause);
        }
        let renewal = self
            .lease
            .allowed(state.length, now)
            .filter(|_| self.auto_renew && !self.at_limit);
        if let Some(length) = renewal.filter(|_| now >= self.next_renewal) {
            return Due::Renew(length);
        }
        let mut until = state.end;
        if let Some(limit) = limit {
            until = until.min(limit);
        }
        if !self.at_risk.is_cancelled() {
            until = until.min(risk_at);
        }
        if renewal.is_some() {
            until = until.min(self.next_renewal);
        }
        Due::Until(until)
    }

    /// The lease length to renew for now, ahead of this hold's own renewal instant, because
    /// another renewal of the service goes out now: `Some` when the hold renews automatically,
    /// is not renewing or lost, and its renewal falls due within half a renewal period (a sixth
    /// of the lease). Holds granted at scattered times so come to renew together, in one
    /// batch, and stay together; no hold renews more often than every half period.
    pub(crate) fn renew_early(&self, now: Instant) -> Option<Duration> {
        if !self.auto_renew || self.at_limit || self.renewing || self.lost.is_cancelled() {
            return None;
        }
        let state = self.lease.state();
        let slack = state.length / 6;
        let soon = self
            .next_renewal
            .checked_sub(slack)
            .is_none_or(|from| now >= from);
        (soon && now < state.end)
            .then(|| self.lease.allowed(state.length, now))
            .flatten()
    }

    /// The lease was changed outside the scheduler (an extend): renew a third of its new
    /// length from now.
    pub(crate) fn extended(&mut self, now: Instant) {
        self.next_renewal = now + self.lease.length() / 3;
    }

    /// Records how `renewal` ended (`None`: the lease ended first), at `now`; the cause when
    /// that loses the hold.
    ///
    /// A successful renewal's next one falls a third of the lease after it was asked for, as
    /// the new lease counts from then: however long the answer took, the holds renewed
    /// together stay together and renew every period, not every period plus a round trip.
    pub(crate) fn renewed(
        &mut self,
        answer: Option<Result<bool>>,
        renewal: &Renewal,
        now: Instant,
    ) -> Option<LostCause> {
        self.renewing = false;
        let length = renewal.length;
        match answer {
            None => Some(LostCause::LeaseExpired),
            Some(Ok(true)) => {
                self.at_limit = length < renewal.before;
                // The lease's length, not this renewal's: an extend that ended while this
                // renewal was in flight, and found the watch renewing, set the newer one.
                self.next_renewal = renewal.asked + self.lease.length() / 3;
                None
            }
            Some(Ok(false)) => Some(LostCause::NotOwner),
            Some(Err(error)) => {
                tracing::warn!(%error, held = ?self.held, "lease renewal failed; retrying until the lease ends");
                self.next_renewal = now + retry_delay(length);
                None
            }
        }
    }

    /// Fires the lost signal for `cause` and reports it; a hold at its `max_hold` is also
    /// released on the server (the lease would end it anyway; a ZooKeeper node would stay
    /// with its session).
    pub(crate) fn fire_lost(self, cause: LostCause) {
        self.lost.cancel();
        telemetry::lost(self.lease.backend(), self.lease.handle(), cause);
        if cause != LostCause::MaxHold {
            return;
        }
        let held = self.held;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = held.release().await {
                    tracing::warn!(%error, ?held, "release at max_hold failed; the lease will end the hold");
                }
            });
        }
    }
}

/// How soon to retry a failed renewal: often enough for several tries within one lease.
fn retry_delay(length: Duration) -> Duration {
    (length / 10).clamp(Duration::from_millis(10), Duration::from_secs(1))
}
