//! The acquisition engine: the loop every backend's `acquire_with` runs.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::field::Empty;

use crate::backend::cleanup::ArmedAttempt;
use crate::backend::{Busy, Deadline, LockSteps, Try};
use crate::telemetry::{self, Outcome};
use crate::{AcquireOptions, Backoff, LockGuard, LockName, Result};

/// Acquires `name` through `steps`, waiting up to `options.wait`: `Ok(None)` when the wait
/// ended with the lock still held elsewhere.
///
/// Validates the options before any I/O; a wait of `Duration::MAX` (or `None`) waits without
/// limit. Between tries it waits on the backend's push source, bounded by the backend's
/// recheck hint, the deadline, and (when nothing pushes) the options' jittered backoff. Errors
/// carry the backend, server, operation and lock name.
///
/// # Cancel safety
///
/// Cancel safe: dropped at any await point, the attempt is cleaned up in the background (the
/// backend's [`clean_up`](LockSteps::clean_up), retried until it succeeds), so no lock, queue
/// entry or node is left behind.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for invalid options, and the
/// errors of the backend's steps.
pub async fn acquire<S: LockSteps>(
    steps: &Arc<S>,
    name: &LockName,
    options: &AcquireOptions,
) -> Result<Option<LockGuard>> {
    let context = |error: crate::Error| {
        error
            .with_server(steps.server())
            .context(steps.backend(), "acquire", name)
    };
    options.validate().map_err(context)?;
    let span = telemetry::debug_span_if_seen!(
        "distlock.acquire",
        backend = steps.backend(),
        lock = %name,
        wait = ?options.wait,
        outcome = Empty,
        error = Empty,
        tries = Empty,
        fencing_token = Empty,
    );
    let started = Instant::now();
    let mut tries = 0_u32;
    let outcome = telemetry::in_span(&span, run(steps, name, options, &mut tries)).await;
    span.record("tries", tries);
    let ended = match &outcome {
        Ok(Some(guard)) => {
            span.record("fencing_token", guard.fencing_token());
            Outcome::Granted
        }
        Ok(None) => Outcome::TimedOut,
        Err(error) => {
            span.record("error", tracing::field::display(error));
            Outcome::Error
        }
    };
    span.record("outcome", ended.as_str());
    telemetry::acquisition(steps.backend(), ended, started.elapsed());
    outcome.map_err(context)
}

/// The tries of [`acquire`]; `tries` counts them.
async fn run<S: LockSteps>(
    steps: &Arc<S>,
    name: &LockName,
    options: &AcquireOptions,
    tries: &mut u32,
) -> Result<Option<LockGuard>> {
    let deadline = Deadline::after(options.wait);
    let window = steps.cleanup_window(options);
    let mut armed = ArmedAttempt::new(steps, steps.begin(name, options), window);
    let mut polls = 0_u32;
    loop {
        *tries = tries.saturating_add(1);
        // An error returns with the attempt still armed: its drop cleans up in the background.
        let busy = match steps.try_once(armed.attempt()).await? {
            Try::Granted(grant) => {
                armed.disarm();
                return Ok(Some(grant.into_guard(
                    name.clone(),
                    steps.backend(),
                    options,
                    steps.leases(),
                )));
            }
            Try::Busy(busy) => busy,
        };
        let now = Instant::now();
        if deadline.passed(now) {
            match steps.abandon(armed.attempt()).await {
                Ok(()) => armed.disarm(),
                Err(error) => {
                    tracing::debug!(%error, "leaving the queue failed; cleaning up in the background")
                }
            }
            return Ok(None);
        }
        let until = wake_time(now, busy, deadline, &options.backoff, &mut polls);
        steps.wait(armed.attempt(), until).await;
    }
}

/// When to try again at the latest: the deadline, the backend's recheck hint, and, when no
/// push source will wake the waiter, the next backoff delay.
fn wake_time(
    now: Instant,
    busy: Busy,
    deadline: Deadline,
    backoff: &Backoff,
    polls: &mut u32,
) -> Deadline {
    let mut until = deadline;
    if let Some(within) = busy.recheck_within {
        until = until.at_most(now, within);
    }
    if !busy.pushed {
        until = until.at_most(now, backoff.delay(*polls));
        *polls = polls.saturating_add(1);
    }
    until
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn polling_waits_back_off_and_pushed_waits_only_bound_by_hints() {
        let now = Instant::now();
        let backoff = Backoff::exponential(Duration::from_millis(10), Duration::from_millis(40));
        let backoff = backoff.unwrap_or_default();
        let mut polls = 0;
        let pushed = wake_time(now, Busy::pushed(), Deadline::NEVER, &backoff, &mut polls);
        assert_eq!((pushed, polls), (Deadline::NEVER, 0));
        let hinted = Busy::pushed().within(Duration::from_millis(5));
        let at = wake_time(now, hinted, Deadline::NEVER, &backoff, &mut polls);
        assert_eq!(at.instant(), Some(now + Duration::from_millis(5)));
        for _ in 0..5 {
            let at = wake_time(now, Busy::polled(), Deadline::NEVER, &backoff, &mut polls);
            let delay = at.instant().map(|at| at - now).unwrap_or_default();
            assert!(delay <= Duration::from_millis(40), "{delay:?}");
        }
        assert_eq!(polls, 5);
        let deadline = Deadline::after(Some(Duration::ZERO));
        let bounded = wake_time(now, Busy::polled(), deadline, &backoff, &mut polls);
        assert!(bounded.instant() <= deadline.instant());
    }
}
