//! Losing a hold: the lost signal, release after loss, and lease renewal.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind};

use super::support::{client, eventually, options, supports, unique_name};
use crate::{ConformanceTarget, scaled, scaled_ms};

/// The lease the loss cases hold: short, so renewal notices a severed hold quickly.
fn short_lease() -> Duration {
    scaled(Duration::from_millis(900))
}

/// A hold severed behind the holder's back: another client acquires; the stale holder's lost
/// signal fires, its release answers `NotHeld` and leaves the new holder's lock alone.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn release_after_loss_is_not_held_and_spares_new_holder(
    target: Arc<dyn ConformanceTarget>,
) {
    let (a, b, c) = (
        client(&target).await,
        client(&target).await,
        client(&target).await,
    );
    let case = "release_after_loss";
    if !supports(&a, case, |c| c.lost_detection, "lost detection") {
        return;
    }
    let name = unique_name(case);
    let stale = a
        .acquire_with_options(&name, &options(scaled_ms(5000), short_lease()))
        .await
        .expect("acquire");
    let stale = stale.expect("first acquire timed out");
    target.sever(&name).await.expect("sever");
    let fresh = b
        .acquire_timeout(&name, scaled_ms(10_000))
        .await
        .expect("acquire after sever");
    eventually(scaled_ms(10_000), "the stale holder's lost signal", || {
        stale.is_lost()
    })
    .await;
    let error = stale.release().await.expect_err("stale release succeeded");
    assert_eq!(error.kind(), ErrorKind::NotHeld, "{error}");
    let third = c.try_acquire(&name).await.expect("try_acquire");
    assert!(
        third.is_none(),
        "the stale holder's release freed the new holder's lock"
    );
    assert!(!fresh.is_lost(), "the new holder was marked lost");
    fresh.release().await.expect("new holder's release");
}

/// The lost signal fires when the backend drops the hold.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn lost_signal_fires_when_severed(target: Arc<dyn ConformanceTarget>) {
    let a = client(&target).await;
    let case = "lost_signal_fires";
    if !supports(&a, case, |c| c.lost_detection, "lost detection") {
        return;
    }
    let name = unique_name(case);
    let guard = a
        .acquire_with_options(&name, &options(scaled_ms(5000), short_lease()))
        .await
        .expect("acquire");
    let guard = guard.expect("acquire timed out");
    target.sever(&name).await.expect("sever");
    let fired = tokio::time::timeout(scaled_ms(10_000), guard.lost().cancelled()).await;
    assert!(
        fired.is_ok(),
        "the lost signal did not fire within 10 s of the hold being severed"
    );
    assert!(guard.is_lost());
}

/// The lost signal stays quiet through a hold and a normal release.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn lost_signal_quiet_on_release(target: Arc<dyn ConformanceTarget>) {
    let a = client(&target).await;
    let name = unique_name("lost_signal_quiet");
    let guard = a
        .acquire_with_options(&name, &options(scaled_ms(5000), short_lease()))
        .await
        .expect("acquire");
    let guard = guard.expect("acquire timed out");
    let lost = guard.lost().clone();
    tokio::time::sleep(short_lease() / 2).await;
    assert!(
        !lost.is_cancelled(),
        "lost fired while the hold was healthy"
    );
    guard.release().await.expect("release");
    tokio::time::sleep(short_lease() * 2).await;
    assert!(!lost.is_cancelled(), "lost fired after a normal release");
}

/// Renewal keeps a lock held for several lease lengths.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn lease_renewal_keeps_lock_past_lease(target: Arc<dyn ConformanceTarget>) {
    let (a, b) = (client(&target).await, client(&target).await);
    let case = "lease_renewal";
    if !supports(&a, case, |c| c.lease_renewal, "lease renewal") {
        return;
    }
    let name = unique_name(case);
    let guard = a
        .acquire_with_options(&name, &options(scaled_ms(5000), short_lease()))
        .await
        .expect("acquire");
    let guard = guard.expect("acquire timed out");
    tokio::time::sleep(short_lease() * 4).await;
    assert!(!guard.is_lost(), "renewal did not keep the hold");
    let other = b.try_acquire(&name).await.expect("try_acquire");
    assert!(
        other.is_none(),
        "the lease ran out although the holder renewed it"
    );
    guard
        .extend(short_lease() * 2)
        .await
        .expect("explicit extend");
    guard.release().await.expect("release after renewals");
}
