//! The operator's way out: `force_release` by fencing token.

use std::sync::Arc;

use lock_core::DistributedLockExt;

use super::support::{client, options, unique_name};
use crate::{ConformanceTarget, scaled, scaled_ms};

/// `force_release` with a stale token changes nothing; with the current token it frees the
/// lock, the holder's lost signal fires, and another client acquires.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn force_release_frees_only_the_current_token(target: Arc<dyn ConformanceTarget>) {
    let (holder, operator, other) = (
        client(&target).await,
        client(&target).await,
        client(&target).await,
    );
    let name = unique_name("force_release");
    let options = options(scaled_ms(5000), scaled_ms(900));
    let earlier = holder.acquire_with(&name, &options).await.expect("acquire");
    let earlier = earlier.expect("acquire timed out");
    let stale = earlier.fencing_token();
    earlier.release().await.expect("release");
    let guard = holder.acquire_with(&name, &options).await.expect("acquire");
    let guard = guard.expect("acquire timed out");
    let current = guard.fencing_token();
    let freed = operator.force_release(&name, stale).await.expect("stale");
    assert!(
        !freed,
        "force_release with a stale token reported a release"
    );
    let status = operator.inspect(&name).await.expect("inspect");
    let tokens: Vec<u64> = status.holders.iter().map(|h| h.fencing_token).collect();
    assert_eq!(tokens, vec![current], "a stale token changed the hold");
    assert!(other.try_acquire(&name).await.expect("try").is_none());
    let missing = operator.force_release(&name, current + 1_000).await;
    assert!(!missing.expect("unknown token"), "a token never granted");
    assert!(operator.force_release(&name, current).await.expect("force"));
    let fired = tokio::time::timeout(scaled_ms(10_000), guard.lost().cancelled()).await;
    assert!(fired.is_ok(), "the holder's lost signal did not fire");
    let next = other.acquire_timeout(&name, scaled(std::time::Duration::from_secs(10)));
    let next = next.await.expect("acquire after force_release");
    assert!(next.fencing_token() > current);
    assert!(
        !operator.force_release(&name, current).await.expect("again"),
        "the old token freed the new holder's lock"
    );
    next.release().await.expect("release");
}

/// `force_release` dropped at any point is all or nothing: once a request already sent has had
/// time to land, either the hold is intact (another client cannot acquire, the holder is not
/// lost) or it is gone (another client acquires, the holder's lost signal fires).
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named locks held until
/// their leases (or session) end; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn force_release_cancelled_midway_is_all_or_nothing(target: Arc<dyn ConformanceTarget>) {
    let (holder, operator, other) = (
        client(&target).await,
        client(&target).await,
        client(&target).await,
    );
    let options = options(scaled_ms(5000), scaled_ms(900));
    for micros in [0, 100, 400, 1_500, 6_000] {
        let name = unique_name("force_release_cancelled");
        let guard = holder.acquire_with(&name, &options).await.expect("acquire");
        let guard = guard.expect("acquire timed out");
        let token = guard.fencing_token();
        let cut = std::time::Duration::from_micros(micros);
        let _ = tokio::time::timeout(cut, operator.force_release(&name, token)).await;
        // A statement already on its way (or on a driver's worker thread) still lands.
        tokio::time::sleep(scaled_ms(300)).await;
        let status = operator.inspect(&name).await.expect("inspect");
        let intact = status.holders.iter().any(|h| h.fencing_token == token);
        if intact {
            assert!(other.try_acquire(&name).await.expect("try").is_none());
            assert!(
                !guard.is_lost(),
                "cut after {micros} us: lost but still held"
            );
            guard.release().await.expect("release of the intact hold");
        } else {
            let next = other.acquire_timeout(&name, scaled_ms(10_000)).await;
            let next = next.expect("the released lock could not be acquired");
            let fired = tokio::time::timeout(scaled_ms(10_000), guard.lost().cancelled()).await;
            assert!(
                fired.is_ok(),
                "cut after {micros} us: released but never lost"
            );
            next.release().await.expect("release");
        }
    }
}
