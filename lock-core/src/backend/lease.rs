//! The lease as the holder knows it: renewed one request at a time, ended early by the clock
//! drift margin, bounded by the hold's `max_hold`, and watched by the service's
//! [lease scheduler](super::Leases) that raises the at-risk and lost signals.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::backend::{HeldLock, Sending};
use crate::{AcquireOptions, LockHandle, Result, telemetry};

/// The lease on the local monotonic clock: the server holds the lock for us at least until
/// [`valid_until`](Lease::valid_until).
#[derive(Debug)]
pub(crate) struct Lease {
    state: Mutex<LeaseState>,
    /// Held for the whole of one renewal: an older request's answer can never overwrite a
    /// newer one's, so the end recorded is always the last one the server confirmed.
    renewing: tokio::sync::Mutex<()>,
    /// The share of each lease assumed lost to clock drift.
    drift: f64,
    /// The share of the lease below which the hold is at risk.
    at_risk: f64,
    /// No renewal reaches past this instant (`max_hold` after the grant).
    hold_until: Option<Instant>,
    /// Which hold this is, for spans and metrics.
    backend: &'static str,
    handle: LockHandle,
}

/// How a [`Lease`] is set up.
pub(crate) struct LeaseTerms {
    pub(crate) sent: Instant,
    pub(crate) length: Duration,
    pub(crate) drift: f64,
    pub(crate) at_risk: f64,
    pub(crate) max_hold: Option<Duration>,
    pub(crate) backend: &'static str,
    pub(crate) handle: LockHandle,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct LeaseState {
    /// The confirmed lease end, less the drift margin and the signal allowance.
    pub(super) end: Instant,
    /// The length each renewal asks for.
    pub(super) length: Duration,
    /// The last renewal failed (or none succeeded since one failed).
    failing: bool,
}

impl Lease {
    /// A lease of `terms.length` granted by a request sent at `terms.sent`.
    pub(crate) fn new(terms: LeaseTerms) -> Self {
        let hold_until = terms
            .max_hold
            .and_then(|limit| terms.sent.checked_add(limit));
        let mut end = end_of(terms.sent, terms.length, terms.drift);
        if let Some(limit) = hold_until {
            end = end.min(limit);
        }
        Self {
            state: Mutex::new(LeaseState {
                end,
                length: terms.length,
                failing: false,
            }),
            renewing: tokio::sync::Mutex::new(()),
            drift: terms.drift,
            at_risk: terms.at_risk,
            hold_until,
            backend: terms.backend,
            handle: terms.handle,
        }
    }

    /// The hold this lease belongs to.
    pub(crate) fn handle(&self) -> &LockHandle {
        &self.handle
    }

    /// The backend's short name.
    pub(crate) fn backend(&self) -> &'static str {
        self.backend
    }

    /// When the hold reaches its `max_hold`, if it has one.
    pub(crate) fn hold_until(&self) -> Option<Instant> {
        self.hold_until
    }

    /// The longest lease a renewal at `now` may ask for instead of `wanted`: cut to end at
    /// the `max_hold` limit. `None` once the limit is (all but) reached: no more renewals.
    pub(crate) fn allowed(&self, wanted: Duration, now: Instant) -> Option<Duration> {
        let Some(limit) = self.hold_until else {
            return Some(wanted);
        };
        let left = limit.saturating_duration_since(now);
        (left >= Duration::from_millis(1)).then(|| wanted.min(left))
    }

    /// The length renewals currently ask for.
    pub(crate) fn length(&self) -> Duration {
        self.state().length
    }

    pub(super) fn state(&self) -> LeaseState {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Until when the server holds the lock for us, by the local clock, less the drift margin
    /// and the signal allowance.
    pub(crate) fn valid_until(&self) -> Instant {
        self.state().end
    }

    /// When less than the at-risk share of the lease is left.
    pub(crate) fn at_risk_at(&self) -> Instant {
        let state = self.state();
        let margin = state.length.mul_f64(self.at_risk);
        state.end.checked_sub(margin).unwrap_or(state.end)
    }

    /// Whether the last renewal failed.
    pub(crate) fn is_failing(&self) -> bool {
        self.state().failing
    }

    /// Asks the server to extend the hold to `length` from now, waiting for any renewal in
    /// flight first, and records the answer. The scheduler's renewals
    /// ([`Sending::Gathered`]) may go out in a batch; the holder's own ([`Sending::AtOnce`],
    /// from [`LockGuard::extend`](crate::LockGuard::extend)) go out at once.
    pub(crate) async fn renew(
        &self,
        held: &dyn HeldLock,
        length: Duration,
        sending: Sending,
    ) -> Result<bool> {
        let _turn = self.renewing.lock().await;
        let span = telemetry::debug_span_if_seen!(
            "distlock.renew",
            backend = self.backend,
            lock = %self.handle.name(),
            fencing_token = self.handle.fencing_token(),
            outcome = tracing::field::Empty,
        );
        let sent = Instant::now();
        let answer = match sending {
            Sending::Gathered => telemetry::in_span(&span, held.renew(length)).await,
            Sending::AtOnce => telemetry::in_span(&span, held.extend(length)).await,
        };
        let outcome = answer.as_ref().ok().copied();
        telemetry::renewal(self.backend, outcome, sent.elapsed());
        match &answer {
            Ok(_) => span.record("outcome", telemetry::renewal_outcome(outcome)),
            Err(error) => span.record("outcome", tracing::field::display(error)),
        };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match answer {
            Ok(true) => {
                *state = LeaseState {
                    end: end_of(sent, length, self.drift),
                    length,
                    failing: false,
                };
            }
            Ok(false) => {}
            Err(_) => state.failing = true,
        }
        drop(state);
        answer
    }
}

/// `sent + length`, less the drift margin and the signal allowance; far in the future if that
/// overflows.
fn end_of(sent: Instant, length: Duration, drift: f64) -> Instant {
    let trusted = length
        .saturating_sub(length.mul_f64(drift))
        .saturating_sub(AcquireOptions::signal_allowance(length));
    sent.checked_add(trusted)
        .unwrap_or_else(|| sent + Duration::from_secs(86_400 * 365 * 30))
}
