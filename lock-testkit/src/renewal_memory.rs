//! What renewing leaves behind in the client, for backends that gather a service's renewals
//! into one batch (one statement, one pipeline). A batch for thousands of holds is large, and
//! a connection keeps the buffers it grew to carry it for as long as it lives, unless the
//! backend gives them back. This reads the live heap before the first renewal and after it.

use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLock, LockGuard};
use tokio::time::Instant;

use crate::holds::hold_many;

/// The live heap around a service's first renewal of its holds.
#[derive(Clone, Copy, Debug)]
pub struct HeapAcrossRenewal {
    /// How many holds renewed.
    pub holds: usize,
    /// Bytes live once every hold was granted, before any renewal.
    pub before: usize,
    /// Bytes live half a renewal period after the first renewal was answered.
    pub after: usize,
}

impl HeapAcrossRenewal {
    /// Bytes per hold that the renewal left live (negative when it freed more than it kept).
    pub fn growth_per_hold(&self) -> f64 {
        (self.after as f64 - self.before as f64) / self.holds as f64
    }
}

/// Attempts at taking the holds inside one renewal window before the measure gives up.
const ATTEMPTS: u32 = 4;

/// Holds `holds` fresh names under `prefix` on `lock`, renewed with a lease of at least
/// `lease`, and reads `live_bytes` (the test binary's counting allocator) once all are held and
/// again half a renewal period (`lease / 6`) after `renewals` (the backend's count of renewal
/// batches or statements) first moves, then releases them.
///
/// The holds must all be taken within `lease / 6`, the window within which the scheduler sends
/// renewals together, or the first renewal would come before the first reading. On a machine
/// too slow for that, the holds are released and taken again under fresh names with a lease
/// long enough for the time taking them took.
///
/// # Panics
///
/// When a hold is refused or lost, or when no attempt took the holds inside the window.
pub async fn heap_across_first_renewal(
    lock: &dyn DistributedLock,
    prefix: &str,
    holds: usize,
    lease: Duration,
    renewals: &(dyn Fn() -> u64 + Sync),
    live_bytes: fn() -> usize,
) -> HeapAcrossRenewal {
    let mut lease = lease;
    for attempt in 1..=ATTEMPTS {
        let options = AcquireOptions::builder()
            .wait(lease)
            .lease(lease)
            .auto_renew(true)
            .build()
            .expect("valid options");
        let (started, renewed_before) = (Instant::now(), renewals());
        let guards = hold_many(lock, &format!("{prefix}/{attempt}"), holds, &options).await;
        let taking = started.elapsed();
        if taking >= lease / 6 || renewals() != renewed_before {
            eprintln!(
                "taking {holds} holds took {taking:?}, past the {:?} window",
                lease / 6
            );
            release_all(guards).await;
            lease = lease.max(taking * 8);
            continue;
        }
        let before = live_bytes();
        while renewals() == renewed_before {
            assert!(started.elapsed() < lease, "no renewal within a lease");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(lease / 6).await;
        let after = live_bytes();
        assert!(
            guards.iter().all(|guard| !guard.is_lost()),
            "a hold was lost"
        );
        release_all(guards).await;
        return HeapAcrossRenewal {
            holds,
            before,
            after,
        };
    }
    panic!("{ATTEMPTS} attempts at taking {holds} holds each outlasted their renewal window");
}

async fn release_all(guards: Vec<LockGuard>) {
    for guard in guards {
        guard.release().await.expect("release");
    }
}
