//! The task behind every guard: renews the lease, and raises the at-risk and lost signals.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::backend::HeldLock;
use crate::backend::lease::Lease;
use crate::telemetry::{self, LostCause};

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
    /// Spawns the task: it renews every third of the lease when `auto_renew` is on (never past
    /// the hold's `max_hold`), fires `at_risk` once less than the at-risk share of the lease is
    /// left, and `lost` when a renewal finds the hold gone, the local clock passes the lease
    /// end, or the hold reaches its `max_hold` (then it also releases the hold). It ends with
    /// `stop` (the guard released or dropped) or `lost`.
    pub(crate) fn spawn(self) {
        tokio::spawn(async move {
            let (stop, lost) = (self.stop.clone(), self.lost.clone());
            let cause = tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = lost.cancelled() => LostCause::Signalled,
                cause = self.watch() => cause,
            };
            if stop.is_cancelled() {
                return;
            }
            lost.cancel();
            telemetry::lost(self.lease.backend(), self.lease.handle(), cause);
            if cause == LostCause::MaxHold {
                self.release_at_limit().await;
            }
        });
    }

    /// Runs until the hold is lost, and says why.
    async fn watch(&self) -> LostCause {
        let lease = &*self.lease;
        let limit = lease.hold_until();
        let mut next_renewal = Instant::now() + lease.length() / 3;
        // Set once a renewal was cut to end at the `max_hold` limit: there is nothing left to
        // renew, and the coming at-risk signal is the limit's, not a failure's.
        let mut at_limit = false;
        loop {
            let state = lease.state();
            let now = Instant::now();
            if limit.is_some_and(|limit| now >= limit) {
                return LostCause::MaxHold;
            }
            let expired = if at_limit {
                LostCause::MaxHold
            } else {
                LostCause::LeaseExpired
            };
            if now >= state.end {
                return expired;
            }
            let risk_at = lease.at_risk_at();
            if now >= risk_at && !self.at_risk.is_cancelled() {
                self.at_risk.cancel();
                let cause = match (at_limit, lease.is_failing()) {
                    (true, _) => "max_hold",
                    (false, true) => "renewal_failing",
                    (false, false) => "renewal_late",
                };
                telemetry::at_risk(lease.backend(), lease.handle(), cause);
            }
            let renewal = lease
                .allowed(state.length, now)
                .filter(|_| self.auto_renew && !at_limit);
            let renewal_due = async {
                match renewal {
                    Some(_) => sleep_until(next_renewal).await,
                    None => std::future::pending::<()>().await,
                }
            };
            let limit_reached = async {
                match limit {
                    Some(limit) => sleep_until(limit).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                biased;
                () = limit_reached => return LostCause::MaxHold,
                () = sleep_until(state.end) => return expired,
                () = lease.changed.notified() => {
                    next_renewal = Instant::now() + lease.length() / 3;
                    continue;
                }
                () = sleep_until(risk_at), if !self.at_risk.is_cancelled() => continue,
                () = renewal_due => {}
            }
            let Some(length) = lease.allowed(state.length, Instant::now()) else {
                continue;
            };
            let renewed = tokio::select! {
                biased;
                () = sleep_until(state.end) => return LostCause::LeaseExpired,
                renewed = lease.renew(&*self.held, length) => renewed,
            };
            match renewed {
                Ok(true) => {
                    at_limit = length < state.length;
                    next_renewal = Instant::now() + length / 3;
                }
                Ok(false) => return LostCause::NotOwner,
                Err(error) => {
                    tracing::warn!(%error, held = ?self.held, "lease renewal failed; retrying until the lease ends");
                    next_renewal = Instant::now() + retry_delay(length);
                }
            }
        }
    }

    /// Ends a hold that reached its `max_hold` on the server too (the lease would end it
    /// anyway; a ZooKeeper node would stay with its session).
    async fn release_at_limit(&self) {
        if let Err(error) = self.held.release().await {
            tracing::warn!(%error, held = ?self.held, "release at max_hold failed; the lease will end the hold");
        }
    }
}

/// How soon to retry a failed renewal: often enough for several tries within one lease.
fn retry_delay(length: Duration) -> Duration {
    (length / 10).clamp(Duration::from_millis(10), Duration::from_secs(1))
}
