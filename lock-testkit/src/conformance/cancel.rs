//! Cancel safety: dropped acquire futures leave nothing behind.

use std::sync::Arc;
use std::time::Duration;

use lock_core::DistributedLockExt;

use super::support::{client, unique_name};
use crate::{ConformanceTarget, scaled_ms};

/// 200 acquire futures dropped at random points (half while the lock is free, half while it is
/// held and they wait) leave the lock acquirable by another client right after each drop.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn cancelled_acquires_leave_lock_acquirable(target: Arc<dyn ConformanceTarget>) {
    let (holder, waiter, checker) = (
        client(&target).await,
        client(&target).await,
        client(&target).await,
    );
    let name = unique_name("cancel_safety");
    let mut dropped = 0;
    for round in 0..200 {
        let held = if round % 2 == 1 {
            Some(
                holder
                    .acquire_timeout(&name, scaled_ms(5000))
                    .await
                    .expect("holder acquire"),
            )
        } else {
            None
        };
        let cut = Duration::from_micros(rand::random_range(0..4000));
        match tokio::time::timeout(cut, waiter.acquire_timeout(&name, scaled_ms(30_000))).await {
            Ok(granted) => granted
                .expect("acquire")
                .release()
                .await
                .expect("release of a completed acquire"),
            Err(_) => dropped += 1,
        }
        if let Some(held) = held {
            held.release().await.expect("holder release");
        }
        let after = checker.acquire_timeout(&name, scaled_ms(2000)).await;
        let after = after.unwrap_or_else(|error| {
            panic!("round {round}: lock stuck after a dropped acquire: {error}")
        });
        after.release().await.expect("checker release");
    }
    assert!(
        dropped >= 50,
        "only {dropped} of 200 acquires were dropped mid-way; the case tested too little"
    );
}
