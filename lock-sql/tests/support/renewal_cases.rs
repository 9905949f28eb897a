//! Renewals of the dialects that gather them (PostgreSQL, MySQL/MariaDB): a service's holds
//! renew together, in one statement per renewal period, and a hold lost among them is told
//! apart from the others.

use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, LockGuard};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;

use super::unique;

fn renewing(lease: Duration) -> AcquireOptions {
    AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .lease(lease)
        .auto_renew(true)
        .build()
        .expect("valid options")
}

/// Holds `count` fresh names, one after another, `gap` apart.
async fn hold_scattered(
    lock: &SqlLock,
    case: &str,
    count: usize,
    gap: Duration,
    options: &AcquireOptions,
) -> Vec<LockGuard> {
    let mut guards = Vec::with_capacity(count);
    for _ in 0..count {
        let guard = lock.acquire_with_options(unique(case), options).await;
        guards.push(guard.expect("acquire").expect("free name"));
        tokio::time::sleep(gap).await;
    }
    guards
}

/// Holds granted at scattered times over a third of a renewal period come to renew together:
/// about one statement per period, not one per hold or per few milliseconds of grants.
pub(crate) async fn holds_of_one_service_renew_in_one_statement_per_period(url: &str) {
    const HOLDS: usize = 40;
    let lock = SqlLock::builder(url).connect().await.expect("connect");
    let lease = scaled_ms(1500);
    let options = renewing(lease);
    let guards = hold_scattered(&lock, "renew-together", HOLDS, lease / 300, &options).await;
    let before = lock
        .renewal_statements()
        .expect("this dialect gathers renewals");
    // Three renewal periods (a third of the lease each).
    tokio::time::sleep(lease).await;
    let statements = lock.renewal_statements().unwrap_or_default() - before;
    assert!(
        guards.iter().all(|guard| !guard.is_lost()),
        "a hold was lost"
    );
    assert!(
        (2..=7).contains(&statements),
        "{statements} statements for {HOLDS} scattered holds over three renewal periods \
         (at most two per period allowed)"
    );
    for guard in guards {
        guard.release().await.expect("release");
    }
}

/// A hold whose row was taken away is lost at its next renewal; the holds renewed in the same
/// statement are not.
pub(crate) async fn a_hold_lost_in_a_batch_is_told_apart(url: &str) {
    let lock = SqlLock::builder(url).connect().await.expect("connect");
    let lease = scaled_ms(900);
    let options = renewing(lease);
    let guards = hold_scattered(&lock, "lost-in-batch", 5, Duration::ZERO, &options).await;
    assert!(
        lock.sever(guards[2].name()).await.expect("sever"),
        "row gone"
    );
    tokio::time::sleep(lease / 3 * 2).await;
    let lost: Vec<bool> = guards.iter().map(LockGuard::is_lost).collect();
    assert_eq!(lost, [false, false, true, false, false], "lost holds");
    for (index, guard) in guards.into_iter().enumerate() {
        let released = guard.release().await;
        assert_eq!(released.is_ok(), index != 2, "release of hold {index}");
    }
}
