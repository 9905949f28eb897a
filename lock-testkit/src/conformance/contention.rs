//! Mutual exclusion under contention, checked by an overlap detector, and fencing order.

use std::sync::Arc;
use std::time::Duration;

use lock_core::DistributedLockExt;

use super::support::{client, supports, unique_name};
use crate::{ConformanceTarget, OverlapDetector, scaled_ms};

fn assert_strictly_increasing(tokens: &[u64]) {
    for pair in tokens.windows(2) {
        assert!(
            pair[0] < pair[1],
            "fencing tokens went from {} to {} in grant order: {tokens:?}",
            pair[0],
            pair[1]
        );
    }
}

/// 16 independent clients take one lock 50 times each; an overlap detector inside the critical
/// section must count zero overlaps, and fencing tokens must rise in grant order.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn contention_16_clients_zero_overlaps(target: Arc<dyn ConformanceTarget>) {
    const CLIENTS: usize = 16;
    const ROUNDS: usize = 50;
    let name = unique_name("contention");
    let detector = Arc::new(OverlapDetector::default());
    let mut tasks = Vec::new();
    let mut fencing = false;
    for id in 0..CLIENTS {
        let lock = client(&target).await;
        fencing = lock.capabilities().fencing;
        let (name, detector) = (name.clone(), Arc::clone(&detector));
        tasks.push(tokio::spawn(async move {
            for _ in 0..ROUNDS {
                let guard = lock
                    .acquire_timeout(&name, scaled_ms(120_000))
                    .await
                    .expect("acquire under contention");
                detector.enter(id, guard.fencing_token());
                tokio::time::sleep(Duration::from_micros(rand::random_range(100..800))).await;
                detector.leave();
                guard.release().await.expect("release under contention");
            }
        }));
    }
    for task in tasks {
        task.await.expect("client task");
    }
    let overlaps = detector.overlaps();
    assert_eq!(
        overlaps,
        0,
        "{overlaps} of {} grants overlapped another holder",
        CLIENTS * ROUNDS
    );
    let tokens = detector.tokens();
    assert_eq!(tokens.len(), CLIENTS * ROUNDS);
    if fencing {
        assert_strictly_increasing(&tokens);
    }
}

/// Fencing tokens strictly increase across grants to different clients and across releases.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn fencing_tokens_strictly_increase(target: Arc<dyn ConformanceTarget>) {
    let clients = [
        client(&target).await,
        client(&target).await,
        client(&target).await,
    ];
    if !supports(
        &clients[0],
        "fencing_tokens_strictly_increase",
        |c| c.fencing,
        "fencing",
    ) {
        return;
    }
    let name = unique_name("fencing");
    let mut tokens = Vec::new();
    for round in 0..30 {
        let lock = &clients[round % clients.len()];
        let guard = lock
            .acquire_timeout(&name, scaled_ms(5000))
            .await
            .expect("acquire");
        tokens.push(guard.fencing_token());
        guard.release().await.expect("release");
    }
    assert_strictly_increasing(&tokens);
    let other = unique_name("fencing_other");
    let guard = clients[0]
        .acquire_timeout(&other, scaled_ms(5000))
        .await
        .expect("acquire other name");
    assert!(
        guard.fencing_token() > 0,
        "fencing token of a grant is zero"
    );
    guard.release().await.expect("release other name");
}
