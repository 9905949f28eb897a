//! Counting semaphores: never more holders than permits, every permit used, fenced grants,
//! limits checked, waiters admitted on release, permits lost when their lease ends.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{Claim, DistributedLock, ErrorKind, LockName, SemaphoreExt};

use super::support::{client, client_if, supports, unique_name, unrenewed};
use crate::{ConformanceTarget, Occupancy, scaled_ms};

async fn permit(
    lock: &Arc<dyn DistributedLock>,
    name: &LockName,
    max: u32,
) -> lock_core::LockGuard {
    lock.acquire_permit_timeout(name, max, scaled_ms(60_000))
        .await
        .unwrap_or_else(|error| panic!("permit of {max}: {error}"))
}

/// 16 clients take a 5-permit semaphore 12 times each, holding 20 to 40 ms; an occupancy
/// detector inside the critical section never sees more than 5 holders at once, and no fencing
/// token repeats. Then 5 clients each take a permit and keep it: all 5 are granted at once
/// (every permit can be in use), and a sixth client is refused. (Whether the contended phase
/// happens to fill all 5 at one instant depends on how fast a release reaches a waiter, so
/// that is checked with the holds kept, not by chance.)
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave permits of its own uniquely named
/// semaphore held until their leases end; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn semaphore_admits_exactly_max_permits(target: Arc<dyn ConformanceTarget>) {
    const PERMITS: u32 = 5;
    const CLIENTS: usize = 16;
    const ROUNDS: usize = 12;
    let case = "semaphore_admits_exactly_max_permits";
    let Some(first) = client_if(&target, case, |c| c.semaphore, "semaphores").await else {
        return;
    };
    let name = unique_name(case);
    let occupancy = Arc::new(Occupancy::new());
    let tokens = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut clients = vec![first];
    for _ in 1..CLIENTS {
        clients.push(client(&target).await);
    }
    let mut tasks = Vec::new();
    for lock in &clients {
        let lock = Arc::clone(lock);
        let (name, occupancy, tokens) = (name.clone(), Arc::clone(&occupancy), Arc::clone(&tokens));
        tasks.push(tokio::spawn(async move {
            for _ in 0..ROUNDS {
                let guard = permit(&lock, &name, PERMITS).await;
                occupancy.enter_shared();
                tokens
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(guard.fencing_token());
                tokio::time::sleep(Duration::from_millis(rand::random_range(20..40))).await;
                occupancy.leave_shared();
                guard.release().await.expect("release a permit");
            }
        }));
    }
    for task in tasks {
        task.await.expect("client task");
    }
    let most = occupancy.max_shared();
    assert!(
        most <= PERMITS as usize,
        "{most} holders of {PERMITS} permits at once"
    );
    // Every permit can be in use at once: PERMITS clients each take one and keep it.
    let mut kept = Vec::new();
    for lock in clients.iter().take(PERMITS as usize) {
        kept.push(permit(lock, &name, PERMITS).await);
    }
    let sixth = clients[PERMITS as usize]
        .try_acquire_permit(&name, PERMITS)
        .await
        .expect("try on a full semaphore");
    assert!(
        sixth.is_none(),
        "a sixth permit of {PERMITS} was granted beside {PERMITS} kept ones"
    );
    for guard in kept {
        guard.release().await.expect("release a kept permit");
    }
    let mut tokens = tokens.lock().map(|t| t.clone()).unwrap_or_default();
    let grants = tokens.len();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(
        tokens.len(),
        grants,
        "fencing tokens repeated across permits"
    );
}

/// Fencing tokens strictly increase across grants of a name, whichever permit, while other
/// permits stay held.
///
/// # Cancel safety
///
/// As [`semaphore_admits_exactly_max_permits`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn semaphore_tokens_strictly_increase(target: Arc<dyn ConformanceTarget>) {
    let case = "semaphore_tokens_strictly_increase";
    let Some(a) = client_if(&target, case, |c| c.semaphore, "semaphores").await else {
        return;
    };
    let b = client(&target).await;
    let name = unique_name(case);
    let kept = permit(&a, &name, 3).await;
    let mut last = kept.fencing_token();
    for round in 0..20 {
        let lock = if round % 2 == 0 { &a } else { &b };
        let guard = permit(lock, &name, 3).await;
        assert!(
            guard.fencing_token() > last,
            "token {} after {last}",
            guard.fencing_token()
        );
        last = guard.fencing_token();
        guard.release().await.expect("release");
    }
    kept.release().await.expect("release the kept permit");
}

/// A limit of 0 is `InvalidInput` before any I/O; a limit other than the holders' is
/// `InvalidInput` while they hold, and fine once they are gone.
///
/// # Cancel safety
///
/// As [`semaphore_admits_exactly_max_permits`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn semaphore_refuses_zero_and_mismatched_limits(target: Arc<dyn ConformanceTarget>) {
    let case = "semaphore_refuses_zero_and_mismatched_limits";
    let Some(a) = client_if(&target, case, |c| c.semaphore, "semaphores").await else {
        return;
    };
    let b = client(&target).await;
    let name = unique_name(case);
    let error = a.try_acquire_permit(&name, 0).await.expect_err("0 permits");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    let held = permit(&a, &name, 2).await;
    let error = b
        .try_acquire_permit(&name, 3)
        .await
        .expect_err("another limit");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    held.release().await.expect("release");
    let other = permit(&b, &name, 3).await;
    other.release().await.expect("release");
}

/// With every permit taken, a try finds none; a waiter is admitted soon after one is released.
///
/// # Cancel safety
///
/// As [`semaphore_admits_exactly_max_permits`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn semaphore_release_admits_a_waiter(target: Arc<dyn ConformanceTarget>) {
    let case = "semaphore_release_admits_a_waiter";
    let Some(a) = client_if(&target, case, |c| c.semaphore, "semaphores").await else {
        return;
    };
    let b = client(&target).await;
    let name = unique_name(case);
    let (first, second) = (permit(&a, &name, 2).await, permit(&a, &name, 2).await);
    let full = b
        .try_acquire_permit(&name, 2)
        .await
        .expect("try on a full semaphore");
    assert!(full.is_none(), "a third permit of 2 was granted");
    let waiter = {
        let (b, name) = (Arc::clone(&b), name.clone());
        tokio::spawn(async move { permit(&b, &name, 2).await })
    };
    tokio::time::sleep(scaled_ms(200)).await;
    assert!(
        !waiter.is_finished(),
        "the waiter got a permit of a full semaphore"
    );
    let released = tokio::time::Instant::now();
    first.release().await.expect("release");
    let third = tokio::time::timeout(scaled_ms(5000), waiter)
        .await
        .expect("the waiter was not admitted after a release")
        .expect("waiter task");
    assert!(
        released.elapsed() < scaled_ms(2000),
        "admitted {:?} after the release",
        released.elapsed()
    );
    assert!(third.fencing_token() > second.fencing_token());
    third.release().await.expect("release");
    second.release().await.expect("release");
}

/// A permit whose lease ends unrenewed is lost (its holder hears it, a drift margin early)
/// before the permit goes to someone else.
///
/// # Cancel safety
///
/// As [`semaphore_admits_exactly_max_permits`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn permit_lost_when_its_lease_ends_before_regrant(target: Arc<dyn ConformanceTarget>) {
    let case = "permit_lost_when_its_lease_ends";
    let Some(a) = client_if(&target, case, |c| c.semaphore, "semaphores").await else {
        return;
    };
    if !supports(&a, case, |c| c.lost_detection, "lost detection") {
        return;
    }
    // The case sets the lease; a backend whose lease is its session (ZooKeeper) has none to set.
    if !supports(&a, case, |c| c.lease_renewal, "client-set leases") {
        return;
    }
    let b = client(&target).await;
    let name = unique_name(case);
    let stale = a
        .acquire_claim_with(&name, Claim::permit(1), &unrenewed())
        .await
        .expect("acquire")
        .expect("a free permit");
    let fresh = permit(&b, &name, 1).await;
    assert!(
        stale.is_lost(),
        "the permit was granted again before its holder heard it was lost"
    );
    assert!(!fresh.is_lost(), "the new holder's permit is marked lost");
    fresh.release().await.expect("release");
}
