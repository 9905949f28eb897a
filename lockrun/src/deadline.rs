//! The instant the supervisor must stop the command at, unless lockrun tells it a later one.

use std::time::Duration;

use distlock::LockGuard;
use tokio::time::Instant;

/// The hold's at-risk point, or earlier if SIGKILL after `grace` would otherwise land past the
/// hold's end: a renewal that the max hold cuts short leaves a smaller margin than the one
/// checked against `grace` at the start.
pub(crate) fn stop_deadline(guard: &LockGuard, grace: Duration) -> Instant {
    let at_risk = guard.at_risk_at();
    guard
        .valid_until()
        .checked_sub(grace)
        .map_or(at_risk, |last_safe| at_risk.min(last_safe))
}

#[cfg(test)]
mod tests {
    use distlock::{AcquireOptions, DistributedLock, MemoryLock};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_margin_cut_by_the_max_hold_still_fits_the_grace() {
        let locks = MemoryLock::new();
        let options = AcquireOptions::builder()
            .lease(Duration::from_secs(9))
            .max_hold(Duration::from_secs(12))
            .build()
            .expect("valid options");
        let name = "deadline".parse().expect("a name");
        let guard = locks.acquire_with(&name, &options).await.expect("acquire");
        let guard = guard.expect("granted");
        let grace = Duration::from_millis(2500);
        // At the start the 3 s margin fits the grace: the at-risk point is the deadline.
        assert_eq!(stop_deadline(&guard, grace), guard.at_risk_at());
        // Renewals at 3 s and 6 s; the second is cut to end at the 12 s max hold.
        tokio::time::sleep(Duration::from_millis(6500)).await;
        let margin = guard.valid_until() - guard.at_risk_at();
        assert!(margin < grace, "the margin was not cut: {margin:?}");
        assert_eq!(stop_deadline(&guard, grace) + grace, guard.valid_until());
        guard.release().await.expect("release");
    }
}
