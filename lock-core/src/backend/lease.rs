//! The lease as the holder knows it: renewed one request at a time, ended early by the clock
//! drift margin, and watched by a monitor task that raises the at-risk and lost signals.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::Result;
use crate::backend::HeldLock;

/// The lease on the local monotonic clock: the server holds the lock for us at least until
/// [`valid_until`](Lease::valid_until).
#[derive(Debug)]
pub(crate) struct Lease {
    state: Mutex<LeaseState>,
    /// Held for the whole of one renewal: an older request's answer can never overwrite a
    /// newer one's, so the end recorded is always the last one the server confirmed.
    renewing: tokio::sync::Mutex<()>,
    changed: Notify,
    /// The share of each lease assumed lost to clock drift.
    drift: f64,
    /// The share of the lease below which the hold is at risk.
    at_risk: f64,
}

#[derive(Clone, Copy, Debug)]
struct LeaseState {
    /// The confirmed lease end, less the drift margin.
    end: Instant,
    /// The length each renewal asks for.
    length: Duration,
    /// The last renewal failed (or none succeeded since one failed).
    failing: bool,
}

impl Lease {
    /// A lease of `length` granted by a request sent at `sent`.
    pub(crate) fn new(sent: Instant, length: Duration, drift: f64, at_risk: f64) -> Self {
        Self {
            state: Mutex::new(LeaseState {
                end: end_of(sent, length, drift),
                length,
                failing: false,
            }),
            renewing: tokio::sync::Mutex::new(()),
            changed: Notify::new(),
            drift,
            at_risk,
        }
    }

    fn state(&self) -> LeaseState {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Until when the server holds the lock for us, by the local clock, drift margin included.
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
    /// flight first, and records the answer.
    pub(crate) async fn renew(&self, held: &dyn HeldLock, length: Duration) -> Result<bool> {
        let _turn = self.renewing.lock().await;
        let sent = Instant::now();
        let answer = held.renew(length).await;
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
        self.changed.notify_one();
        answer
    }
}

/// `sent + length`, less the drift margin; far in the future if that overflows.
fn end_of(sent: Instant, length: Duration, drift: f64) -> Instant {
    let trusted = length.saturating_sub(length.mul_f64(drift));
    sent.checked_add(trusted)
        .unwrap_or_else(|| sent + Duration::from_secs(86_400 * 365 * 30))
}

/// What the monitor watches and signals.
pub(crate) struct Monitor {
    pub(crate) lease: Arc<Lease>,
    pub(crate) held: Arc<dyn HeldLock>,
    pub(crate) auto_renew: bool,
    pub(crate) at_risk: CancellationToken,
    pub(crate) lost: CancellationToken,
    pub(crate) stop: CancellationToken,
}

impl Monitor {
    /// Spawns the task: it renews every third of the lease when `auto_renew` is on, fires
    /// `at_risk` once less than the at-risk share of the lease is left, and `lost` when a
    /// renewal finds the hold gone or the local clock passes the lease end. It ends with
    /// `stop` or `lost`.
    pub(crate) fn spawn(self) {
        tokio::spawn(async move {
            let (stop, lost) = (self.stop.clone(), self.lost.clone());
            tokio::select! {
                () = stop.cancelled() => {}
                () = lost.cancelled() => {}
                () = self.watch() => lost.cancel(),
            }
        });
    }

    /// Runs until the hold is lost; returning means "fire the lost signal".
    async fn watch(&self) {
        let lease = &*self.lease;
        let mut next_renewal = Instant::now() + lease.state().length / 3;
        loop {
            let state = lease.state();
            let now = Instant::now();
            if now >= state.end {
                return;
            }
            let risk_at = lease.at_risk_at();
            if now >= risk_at {
                self.at_risk.cancel();
            }
            let renewal_due = async {
                if self.auto_renew {
                    sleep_until(next_renewal).await;
                } else {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                biased;
                () = sleep_until(state.end) => return,
                () = lease.changed.notified() => {
                    next_renewal = Instant::now() + lease.state().length / 3;
                    continue;
                }
                () = sleep_until(risk_at), if !self.at_risk.is_cancelled() => continue,
                () = renewal_due => {}
            }
            let renewed = tokio::select! {
                biased;
                () = sleep_until(state.end) => return,
                renewed = lease.renew(&*self.held, state.length) => renewed,
            };
            match renewed {
                Ok(true) => next_renewal = Instant::now() + state.length / 3,
                Ok(false) => return,
                Err(error) => {
                    tracing::warn!(%error, held = ?self.held, "lease renewal failed; retrying until the lease ends");
                    next_renewal = Instant::now() + retry_delay(state.length);
                }
            }
        }
    }
}

/// How soon to retry a failed renewal: often enough for several tries within one lease.
fn retry_delay(length: Duration) -> Duration {
    (length / 10).clamp(Duration::from_millis(10), Duration::from_secs(1))
}
