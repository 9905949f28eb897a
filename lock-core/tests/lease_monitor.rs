//! The lease arithmetic every backend's guards share: renewals one at a time, the clock drift
//! margin, and the at-risk and lost signals, under paused tokio time. The holds here answer
//! renewals the way a server does (after a delay, extending from when the request arrived),
//! so the guard's view can be compared with the "server's" at every step.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use lock_core::backend::{Grant, HeldLock, Leases};
use lock_core::{AcquireOptions, DistributedLockExt, ErrorKind, LockGuard, LockName, MemoryLock};
use tokio::time::Instant;

/// A hold whose renewals reach the "server" after a random delay and whose answers come back
/// after another; the server's lease end is recorded when each request arrives.
#[derive(Debug)]
struct SlowServer {
    end: Mutex<Instant>,
    failing: bool,
}

#[async_trait]
impl HeldLock for SlowServer {
    async fn release(&self) -> lock_core::Result<bool> {
        Ok(true)
    }

    async fn renew(&self, lease: Duration) -> lock_core::Result<bool> {
        if self.failing {
            tokio::time::sleep(Duration::from_millis(5)).await;
            return Err(lock_core::Error::new(ErrorKind::Unavailable, "no answer"));
        }
        tokio::time::sleep(Duration::from_micros(rand::random_range(0..3000))).await;
        *self.end.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now() + lease;
        tokio::time::sleep(Duration::from_micros(rand::random_range(0..3000))).await;
        Ok(true)
    }
}

fn guard(server: &Arc<SlowServer>, options: &AcquireOptions) -> LockGuard {
    let held: Arc<dyn HeldLock> = Arc::clone(server) as Arc<dyn HeldLock>;
    let name = LockName::new("lease").expect("name");
    Grant::new(1, held, Instant::now()).into_guard(name, "test", options, &Leases::default())
}

fn options(lease_ms: u64) -> AcquireOptions {
    AcquireOptions::builder()
        .lease(Duration::from_millis(lease_ms))
        .build()
        .expect("options")
}

/// Extends racing each other and the background renewal, 1,000 times: the guard's lease end
/// is never later than the one the server last recorded.
#[tokio::test(start_paused = true)]
async fn racing_extends_never_overstate_the_lease() {
    let server = Arc::new(SlowServer {
        end: Mutex::new(Instant::now() + Duration::from_millis(300)),
        failing: false,
    });
    let guard = guard(&server, &options(300));
    for round in 0..1000 {
        let (a, b) = (
            Duration::from_millis(rand::random_range(100..5000)),
            Duration::from_millis(rand::random_range(100..5000)),
        );
        let (first, second) = tokio::join!(guard.extend(a), guard.extend(b));
        first.and(second).expect("extend");
        let server_end = *server.end.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            guard.valid_until() <= server_end,
            "round {round}: the guard assumes {:?} more than the server granted",
            guard.valid_until() - server_end
        );
    }
    assert!(!guard.is_lost());
}

/// The guard's lease ends the drift margin and the signal allowance before the server's.
#[tokio::test(start_paused = true)]
async fn the_drift_margin_ends_the_local_lease_early() {
    let server = Arc::new(SlowServer {
        end: Mutex::new(Instant::now()),
        failing: false,
    });
    let options = AcquireOptions::builder()
        .lease(Duration::from_secs(10))
        .clock_drift(0.05)
        .auto_renew(false)
        .build()
        .expect("options");
    let granted = Instant::now();
    let guard = guard(&server, &options);
    // 5 % of 10 s, and the 50 ms signal allowance.
    assert_eq!(guard.valid_until(), granted + Duration::from_millis(9450));
    tokio::time::sleep(Duration::from_millis(9440)).await;
    assert!(!guard.is_lost());
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(
        guard.is_lost(),
        "lost did not fire at the end of the trusted lease"
    );
}

/// A short lease's drift share is a few milliseconds, less than a loaded host can hold a
/// process off the CPU: the lost signal also leads by the signal allowance, so a holder
/// delayed that long still learns of the loss before the server can pass the lock on.
#[tokio::test(start_paused = true)]
async fn the_lost_signal_leads_a_short_lease_by_the_signal_allowance() {
    let server = Arc::new(SlowServer {
        end: Mutex::new(Instant::now()),
        failing: false,
    });
    let options = AcquireOptions::builder()
        .lease(Duration::from_millis(800))
        .auto_renew(false)
        .build()
        .expect("options");
    let granted = Instant::now();
    let guard = guard(&server, &options);
    // 1 % drift of 800 ms is 8 ms; the allowance (a twentieth of a lease this short) is 40 ms.
    assert_eq!(guard.valid_until(), granted + Duration::from_millis(752));
    assert_eq!(
        AcquireOptions::signal_allowance(Duration::from_secs(30)),
        AcquireOptions::SIGNAL_ALLOWANCE
    );
    assert_eq!(
        AcquireOptions::signal_allowance(AcquireOptions::MIN_LEASE),
        Duration::from_millis(5)
    );
    tokio::time::sleep(Duration::from_millis(751)).await;
    assert!(!guard.is_lost());
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert!(guard.is_lost(), "lost did not fire at the allowance");
}

/// Failing renewals raise at-risk once less than the at-risk share is left, then lost at the
/// end; a guard whose renewals succeed raises neither over many leases.
#[tokio::test(start_paused = true)]
async fn failing_renewals_raise_at_risk_before_lost() {
    let failing = Arc::new(SlowServer {
        end: Mutex::new(Instant::now()),
        failing: true,
    });
    let options = AcquireOptions::builder()
        .lease(Duration::from_secs(3))
        .clock_drift(0.0)
        .at_risk(0.25)
        .build()
        .expect("options");
    let granted = Instant::now();
    let doomed = guard(&failing, &options);
    doomed.at_risk().cancelled().await;
    let at_risk = granted.elapsed();
    doomed.lost().cancelled().await;
    let lost = granted.elapsed();
    assert!(
        doomed.is_suspended(),
        "failing renewals do not show as suspended"
    );
    // No drift share: the lease ends the 50 ms signal allowance early, at-risk a quarter of
    // the lease before that.
    assert_eq!(
        at_risk,
        Duration::from_millis(2200),
        "at risk at {at_risk:?}"
    );
    assert_eq!(lost, Duration::from_millis(2950), "lost at {lost:?}");

    let healthy = Arc::new(SlowServer {
        end: Mutex::new(Instant::now()),
        failing: false,
    });
    let fine = guard(&healthy, &options);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(!fine.is_at_risk() && !fine.is_lost());
    assert!(fine.valid_for() > Duration::from_secs(1));
}

/// A wait of `Duration::MAX` waits without limit; a lease of `Duration::MAX` is refused
/// before anything happens.
#[tokio::test]
async fn duration_max_waits_forever_and_is_refused_as_a_lease() {
    let locks = MemoryLock::new();
    let mut options = AcquireOptions::default();
    options.wait = Some(Duration::MAX);
    let guard = locks.acquire_with_options("max", &options).await;
    guard
        .expect("acquire")
        .expect("granted")
        .release()
        .await
        .expect("release");
    let mut options = AcquireOptions::default();
    options.lease = Duration::MAX;
    let error = locks
        .acquire_with_options("max", &options)
        .await
        .expect_err("accepted");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
}

/// Re-entry works through a clone of the service and from both branches of a `join!`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_lock_reenters_through_clones_and_joined_branches() {
    let locks = MemoryLock::new();
    let clone = locks.clone();
    let run = locks.with_lock("reenter", || async {
        let (a, b) = tokio::join!(
            clone.with_lock("reenter", || async { 1 }),
            locks.with_lock("reenter", || async { 2 })
        );
        a.expect("clone") + b.expect("same")
    });
    let total = tokio::time::timeout(Duration::from_secs(5), run).await;
    assert_eq!(total.expect("deadlocked").expect("outer"), 3);
}
