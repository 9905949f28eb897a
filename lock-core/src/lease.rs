//! The lease monitor: renews a hold in the background and fires the lost signal.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until, timeout_at};
use tokio_util::sync::CancellationToken;

use crate::HeldLock;

/// The lease as last confirmed by the server, on the local monotonic clock.
#[derive(Debug)]
pub(crate) struct Lease {
    state: Mutex<LeaseState>,
    changed: Notify,
}

#[derive(Clone, Copy, Debug)]
struct LeaseState {
    /// The server holds the lock for us at least until this instant.
    end: Instant,
    /// The length each renewal asks for.
    length: Duration,
}

impl Lease {
    fn state(&self) -> LeaseState {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a renewal the server confirmed for a request sent at `sent`.
    pub(crate) fn confirm(&self, sent: Instant, length: Duration) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = LeaseState {
            end: sent + length,
            length,
        };
        drop(state);
        self.changed.notify_one();
    }
}

/// Starts the monitor for a hold granted by a request sent at `granted_at`.
///
/// The task renews every third of the lease when `auto_renew` is on, and cancels `lost` when a
/// renewal finds the hold gone, or when the local clock passes the last confirmed lease end
/// (renewals failing, or renewal off). It ends when `stop` or `lost` is cancelled.
pub(crate) fn spawn_monitor(
    held: Arc<dyn HeldLock>,
    granted_at: Instant,
    length: Duration,
    auto_renew: bool,
    lost: CancellationToken,
    stop: CancellationToken,
) -> Arc<Lease> {
    let lease = Arc::new(Lease {
        state: Mutex::new(LeaseState {
            end: granted_at + length,
            length,
        }),
        changed: Notify::new(),
    });
    let monitor = Arc::clone(&lease);
    tokio::spawn(async move {
        tokio::select! {
            () = stop.cancelled() => {}
            () = lost.cancelled() => {}
            () = watch(&monitor, &*held, auto_renew, granted_at) => lost.cancel(),
        }
    });
    lease
}

/// Runs until the hold is lost; returning means "fire the lost signal".
async fn watch(lease: &Lease, held: &dyn HeldLock, auto_renew: bool, granted_at: Instant) {
    let mut next_renewal = granted_at + lease.state().length / 3;
    loop {
        let state = lease.state();
        if Instant::now() >= state.end {
            return;
        }
        let renewal_due = async {
            if auto_renew {
                sleep_until(next_renewal).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = sleep_until(state.end) => return,
            () = lease.changed.notified() => continue,
            () = renewal_due => {}
        }
        let sent = Instant::now();
        match timeout_at(state.end, held.renew(state.length)).await {
            Ok(Ok(true)) => {
                lease.confirm(sent, state.length);
                next_renewal = sent + state.length / 3;
            }
            Ok(Ok(false)) => return,
            Ok(Err(error)) => {
                tracing::warn!(%error, ?held, "lease renewal failed; retrying until the lease ends");
                next_renewal = Instant::now() + retry_delay(state.length);
            }
            Err(_elapsed) => return,
        }
    }
}

/// How soon to retry a failed renewal: often enough for several tries within one lease.
fn retry_delay(length: Duration) -> Duration {
    (length / 10).clamp(Duration::from_millis(10), Duration::from_secs(1))
}
