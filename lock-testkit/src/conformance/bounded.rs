//! Holds that end on schedule: `max_hold`, and the at-risk signal ahead of a loss.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt};
use tokio::time::Instant;

use super::support::{client, unique_name};
use crate::faults::{Fault, FaultProxy};
use crate::{ConformanceTarget, scaled, scaled_ms};

/// A hold with `max_hold` 2 s on a 1 s lease is lost at 2 s (within one renewal interval),
/// though it renews meanwhile, and the lock is then free for another client.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn max_hold_ends_the_hold_on_schedule(target: Arc<dyn ConformanceTarget>) {
    let (holder, other) = (client(&target).await, client(&target).await);
    let name = unique_name("max_hold");
    let (lease, max_hold) = (scaled_ms(1000), scaled_ms(2000));
    let options = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .lease(lease)
        .max_hold(max_hold)
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    let started = Instant::now();
    let guard = holder.acquire_with(&name, &options).await.expect("acquire");
    let guard = guard.expect("acquire timed out");
    let limit = max_hold + lease;
    let fired = tokio::time::timeout(limit, guard.lost().cancelled()).await;
    let at = started.elapsed();
    assert!(fired.is_ok(), "max_hold {max_hold:?} did not end the hold");
    let renewal = lease / 3;
    assert!(
        at + renewal >= max_hold && at <= max_hold + renewal,
        "lost after {at:?}, not at max_hold {max_hold:?} within one renewal interval"
    );
    let next = other.acquire_timeout(&name, scaled(Duration::from_secs(10)));
    let next = next.await.expect("the lock was not freed after max_hold");
    assert!(next.fencing_token() > guard.fencing_token());
    next.release().await.expect("release");
}

/// A stalled link (the server answers nothing): `at_risk` fires while the hold is still
/// valid, before `lost`. Skipped for backends without a network server.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn at_risk_fires_before_lost_on_a_stalled_link(target: Arc<dyn ConformanceTarget>) {
    let Some(server) = target.server_addr() else {
        eprintln!("SKIPPED at_risk_fires_before_lost: no network server");
        return;
    };
    let proxy = FaultProxy::start(server).await;
    let timeout = scaled_ms(500);
    let Some(proxied) = target.client_at(proxy.addr(), timeout).await else {
        eprintln!("SKIPPED at_risk_fires_before_lost: no proxied client");
        return;
    };
    let proxied = proxied.unwrap_or_else(|error| panic!("proxied client: {error}"));
    let name = unique_name("at_risk");
    let options = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .lease(scaled_ms(3000))
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    let guard = proxied
        .acquire_with(&name, &options)
        .await
        .expect("acquire");
    let guard = guard.expect("acquire timed out");
    let handle = guard.handle();
    let at_risk = guard.at_risk().clone();
    let watcher = tokio::spawn(async move {
        at_risk.cancelled().await;
        handle.is_lost()
    });
    proxy.set(Fault::Blackhole);
    proxy.stall_open_connections();
    let lost = tokio::time::timeout(scaled_ms(30_000), guard.lost().cancelled()).await;
    assert!(lost.is_ok(), "the stalled hold was never lost");
    let lost_first = watcher.await.expect("watcher");
    assert!(!lost_first, "at_risk fired only with lost, not before it");
    drop(guard);
}
