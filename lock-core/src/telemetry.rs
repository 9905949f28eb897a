//! Metrics and tracing events, emitted once for every backend by the engine, the lease
//! scheduler and the guard.
//!
//! Metrics go through the [`metrics`](https://docs.rs/metrics) facade when the `metrics`
//! feature is on (the application installs the exporter); with it off, the metric calls
//! compile to nothing. Names follow OpenTelemetry's style (dot-separated, unit in the
//! description; a Prometheus exporter writes `distlock_lock_acquisitions` and so on).
//! Every metric carries a `backend` label (`redis`, `postgres`, ...); none carries the lock
//! name, whose number is unbounded.
//!
//! | Name | Kind | Labels | Meaning |
//! |---|---|---|---|
//! | `distlock.lock.acquisitions` | counter | `backend`, `outcome` (`granted`, `timed_out`, `error`) | acquisitions ended |
//! | `distlock.lock.wait.duration` | histogram, s | `backend`, `outcome` | time from the call to its outcome |
//! | `distlock.lock.hold.duration` | histogram, s | `backend` | time from grant to release or drop |
//! | `distlock.lock.held` | gauge | `backend` | guards alive now |
//! | `distlock.lock.renewals` | counter | `backend`, `outcome` (`renewed`, `not_owner`, `error`) | renewal requests answered |
//! | `distlock.lock.renewal.duration` | histogram, s | `backend` | renewal round trip |
//! | `distlock.lock.at_risk` | counter | `backend`, `cause` (`renewal_failing`, `renewal_late`, `max_hold`) | holds that became at risk |
//! | `distlock.lock.lost` | counter | `backend`, `cause` (`lease_expired`, `not_owner`, `max_hold`, `signalled`) | holds lost |
//!
//! Spans and events (target `lock_core`): `distlock.acquire` (fields `backend`, `lock`,
//! `wait`, `outcome`, `error`, `tries`, `fencing_token`), `distlock.renew` (`backend`, `lock`,
//! `fencing_token`, `outcome`), `distlock.release` (`backend`, `lock`, `fencing_token`,
//! `outcome`), and the events `distlock.at_risk` and `distlock.lost` (`backend`, `lock`,
//! `fencing_token`, `cause`) at `warn` level.

use std::time::Duration;

use crate::LockHandle;

/// Acquisitions ended, by `backend` and `outcome`.
pub const ACQUISITIONS: &str = "distlock.lock.acquisitions";
/// Wait time of each acquisition, seconds, by `backend` and `outcome`.
pub const WAIT_DURATION: &str = "distlock.lock.wait.duration";
/// Hold time from grant to release or drop, seconds, by `backend`.
pub const HOLD_DURATION: &str = "distlock.lock.hold.duration";
/// Guards alive now, by `backend`.
pub const HELD: &str = "distlock.lock.held";
/// Renewal requests answered, by `backend` and `outcome`.
pub const RENEWALS: &str = "distlock.lock.renewals";
/// Renewal round trip, seconds, by `backend`.
pub const RENEWAL_DURATION: &str = "distlock.lock.renewal.duration";
/// Holds that became at risk, by `backend` and `cause`.
pub const AT_RISK: &str = "distlock.lock.at_risk";
/// Holds lost, by `backend` and `cause`.
pub const LOST: &str = "distlock.lock.lost";

/// How an acquisition ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Granted,
    TimedOut,
    Error,
}

impl Outcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Granted => "granted",
            Self::TimedOut => "timed_out",
            Self::Error => "error",
        }
    }
}

/// Why a hold was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LostCause {
    /// The local clock passed the last confirmed lease end (renewals failed or were late).
    LeaseExpired,
    /// The server showed the hold is no longer ours.
    NotOwner,
    /// The hold reached its `max_hold`.
    MaxHold,
    /// The backend fired the signal itself (a deleted node, an ended session).
    Signalled,
}

impl LostCause {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::LeaseExpired => "lease_expired",
            Self::NotOwner => "not_owner",
            Self::MaxHold => "max_hold",
            Self::Signalled => "signalled",
        }
    }
}

/// Whether a `debug` span of the engine, the lease scheduler or the guard can reach anyone: a
/// `tracing` subscriber that may enable `debug`, or, with none installed, a `log` logger at
/// `debug` (tracing's `log` compatibility, which another crate in the build may switch on).
/// When neither can, those spans are [`Span::none`](tracing::Span::none): a disabled span
/// still evaluates its fields and, with the compatibility on, asks `log` on every record,
/// enter and exit, which every acquisition and release would pay for nothing.
pub(crate) fn debug_spans() -> bool {
    tracing::level_enabled!(tracing::Level::DEBUG)
        || (!tracing::dispatcher::has_been_set() && log::max_level() >= log::LevelFilter::Debug)
}

/// `tracing::debug_span!` with the same arguments when [`debug_spans`] says someone can see
/// it, else [`Span::none`](tracing::Span::none): the one place that choice is made.
macro_rules! debug_span_if_seen {
    ($($arg:tt)*) => {
        if $crate::telemetry::debug_spans() {
            tracing::debug_span!($($arg)*)
        } else {
            tracing::Span::none()
        }
    };
}
pub(crate) use debug_span_if_seen;

/// Runs `work` inside `span`; a span nobody sees ([`Span::none`](tracing::Span::none)) is not
/// entered and left at every poll of `work`.
pub(crate) async fn in_span<F: std::future::Future>(span: &tracing::Span, work: F) -> F::Output {
    if span.is_disabled() {
        work.await
    } else {
        tracing::Instrument::instrument(work, span.clone()).await
    }
}

/// Records an acquisition's end.
pub(crate) fn acquisition(backend: &'static str, outcome: Outcome, waited: Duration) {
    #[cfg(feature = "metrics")]
    {
        let labels = [("backend", backend), ("outcome", outcome.as_str())];
        metrics::counter!(ACQUISITIONS, &labels).increment(1);
        metrics::histogram!(WAIT_DURATION, &labels).record(waited.as_secs_f64());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (backend, outcome, waited);
}

/// Records a new guard.
pub(crate) fn hold_started(backend: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(HELD, "backend" => backend).increment(1.0);
    #[cfg(not(feature = "metrics"))]
    let _ = backend;
}

/// Records a guard's end (released or dropped) after `held` of holding.
pub(crate) fn hold_ended(backend: &'static str, held: Duration) {
    #[cfg(feature = "metrics")]
    {
        metrics::gauge!(HELD, "backend" => backend).decrement(1.0);
        metrics::histogram!(HOLD_DURATION, "backend" => backend).record(held.as_secs_f64());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (backend, held);
}

/// Records a renewal's answer: `Some(true)` renewed, `Some(false)` not ours, `None` an error.
pub(crate) fn renewal(backend: &'static str, answer: Option<bool>, took: Duration) {
    #[cfg(feature = "metrics")]
    {
        let outcome = renewal_outcome(answer);
        metrics::counter!(RENEWALS, "backend" => backend, "outcome" => outcome).increment(1);
        metrics::histogram!(RENEWAL_DURATION, "backend" => backend).record(took.as_secs_f64());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (backend, answer, took);
}

pub(crate) fn renewal_outcome(answer: Option<bool>) -> &'static str {
    match answer {
        Some(true) => "renewed",
        Some(false) => "not_owner",
        None => "error",
    }
}

/// Records and logs a hold becoming at risk.
pub(crate) fn at_risk(backend: &'static str, handle: &LockHandle, cause: &'static str) {
    tracing::warn!(
        name: "distlock.at_risk",
        backend,
        lock = %handle.name(),
        fencing_token = handle.fencing_token(),
        cause,
        "hold at risk: stop work that must not outlive it"
    );
    #[cfg(feature = "metrics")]
    metrics::counter!(AT_RISK, "backend" => backend, "cause" => cause).increment(1);
}

/// Records and logs a lost hold.
pub(crate) fn lost(backend: &'static str, handle: &LockHandle, cause: LostCause) {
    tracing::warn!(
        name: "distlock.lost",
        backend,
        lock = %handle.name(),
        fencing_token = handle.fencing_token(),
        cause = cause.as_str(),
        "hold lost: another holder may run from now on"
    );
    #[cfg(feature = "metrics")]
    metrics::counter!(LOST, "backend" => backend, "cause" => cause.as_str()).increment(1);
}

/// Gives every metric its description and unit in the installed recorder: call once, after
/// installing the exporter.
#[cfg(feature = "metrics")]
pub fn describe_metrics() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(ACQUISITIONS, "Lock acquisitions ended, by outcome");
    describe_histogram!(
        WAIT_DURATION,
        Unit::Seconds,
        "Time from acquire call to outcome"
    );
    describe_histogram!(HOLD_DURATION, Unit::Seconds, "Time from grant to release");
    describe_gauge!(HELD, "Lock guards alive");
    describe_counter!(RENEWALS, "Lease renewals answered, by outcome");
    describe_histogram!(RENEWAL_DURATION, Unit::Seconds, "Lease renewal round trip");
    describe_counter!(AT_RISK, "Holds that became at risk, by cause");
    describe_counter!(LOST, "Holds lost, by cause");
}
