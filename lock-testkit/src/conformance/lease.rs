//! The lease the holder counts on is never longer than the one the server keeps, and an
//! extend the holder asks for is sent at once.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, LockName};
use tokio::time::Instant;

use super::support::{client, options, supports, unique_name};
use crate::{ConformanceTarget, scaled_ms};

/// Two extends of random length race each other (and the background renewal of a 600 ms
/// lease) 1,000 times; after each round the guard's lease end is no later than the server's.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn racing_extends_never_overstate_the_lease(target: Arc<dyn ConformanceTarget>) {
    let lock = client(&target).await;
    let case = "racing_extends";
    if !supports(&lock, case, |c| c.lease_renewal, "lease renewal") {
        return;
    }
    let name = unique_name(case);
    let guard = lock
        .acquire_with_options(&name, &options(scaled_ms(5000), Duration::from_millis(600)))
        .await
        .expect("acquire")
        .expect("granted");
    if target.lease_left(&name).await.is_none() {
        eprintln!("SKIPPED {case}: the target cannot read the server's lease");
        return guard.release().await.expect("release");
    }
    for round in 0..1000 {
        let (a, b) = (
            Duration::from_millis(rand::random_range(300..3000)),
            Duration::from_millis(rand::random_range(300..3000)),
        );
        let (first, second) = tokio::join!(guard.extend(a), guard.extend(b));
        first
            .and(second)
            .unwrap_or_else(|error| panic!("round {round}: extend: {error}"));
        let left = target.lease_left(&name).await.expect("the server's lease");
        // The server measured `left` before now, so its lease ends no later than now + left
        // (plus its clock's 1 ms granularity): a guard counting on more is wrong for sure.
        let server_end = Instant::now() + left + Duration::from_millis(1);
        assert!(
            guard.valid_until() <= server_end,
            "round {round}: the guard counts on {:?} more than the server keeps",
            guard.valid_until() - server_end
        );
    }
    assert!(!guard.is_lost(), "the hold was lost while extending");
    guard.release().await.expect("release");
}

/// How many extends, and as many acquire-and-release pairs, the at-once case times.
const TIMED: u32 = 40;

/// An extend the holder asks for is sent at once, not held back to go out with other holds'
/// renewals: its median time is no longer than that of acquiring and releasing a free lock
/// (two round trips), timed alternately on the same client. Medians, so that a moment the
/// machine is busy elsewhere does not decide.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named locks held until
/// their leases end; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn an_extend_is_sent_at_once(target: Arc<dyn ConformanceTarget>) {
    let lock = client(&target).await;
    let case = "extend_at_once";
    if !supports(&lock, case, |c| c.lease_renewal, "lease renewal") {
        return;
    }
    let (name, other) = (unique_name(case), unique_name(case));
    let lease = Duration::from_secs(30);
    let guard = lock
        .acquire_with_options(&name, &options(scaled_ms(5000), lease))
        .await
        .expect("acquire")
        .expect("granted");
    // Untimed first rounds: connections opened and statements prepared on first use.
    guard.extend(lease).await.expect("extend");
    acquire_and_release(&lock, &other).await;
    let (mut extends, mut pairs) = (Vec::new(), Vec::new());
    for round in 0..TIMED {
        let started = Instant::now();
        guard
            .extend(lease)
            .await
            .unwrap_or_else(|error| panic!("round {round}: extend: {error}"));
        extends.push(started.elapsed());
        let started = Instant::now();
        acquire_and_release(&lock, &other).await;
        pairs.push(started.elapsed());
    }
    let (extend, pair) = (median(extends), median(pairs));
    assert!(
        extend <= pair,
        "an extend took {extend:?} (median), an acquire and release {pair:?}: the extend waited"
    );
    guard.release().await.expect("release");
}

/// Takes the free lock `name` and gives it back.
async fn acquire_and_release(lock: &Arc<dyn DistributedLock>, name: &LockName) {
    let guard = lock
        .try_acquire(name)
        .await
        .expect("acquire")
        .expect("free");
    guard.release().await.expect("release");
}

/// The middle one of `times`.
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}
