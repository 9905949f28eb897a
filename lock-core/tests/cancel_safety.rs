//! The `# Cancel safety` promises of lock-core's own futures, each backed here.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::FutureExt;
use lock_core::backend::{Grant, HeldLock, Leases};
use lock_core::{AcquireOptions, DistributedLockExt, LockName, MemoryLock};

async fn free_soon(lock: &MemoryLock, name: &str) -> bool {
    lock.acquire_timeout(name, Duration::from_secs(2))
        .await
        .map(drop)
        .is_ok()
}

/// A hold whose server answers a release only after 50 ms, and that ends only through that
/// release (dropping it leaves the lock held, as a dropped network request would).
#[derive(Debug)]
struct SlowRelease {
    lock: MemoryLock,
    name: LockName,
}

#[async_trait]
impl HeldLock for SlowRelease {
    async fn release(&self) -> lock_core::Result<bool> {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(self.lock.sever(&self.name))
    }
}

#[tokio::test]
async fn dropped_release_still_releases() {
    let lock = MemoryLock::new();
    let name = LockName::new("cancel/release").expect("name");
    let server_side = lock.acquire(&name).await.expect("acquire");
    // The server-side hold lives on (renewed) until the slow release severs it.
    std::mem::forget(server_side);
    let held = Arc::new(SlowRelease {
        lock: lock.clone(),
        name: name.clone(),
    });
    let guard = Grant::new(1, held, tokio::time::Instant::now()).into_guard(
        name,
        "test",
        &AcquireOptions::default(),
        &Leases::default(),
    );
    let cut = tokio::time::timeout(Duration::from_millis(10), guard.release()).await;
    assert!(
        cut.is_err(),
        "the release finished before its server answered"
    );
    assert!(
        free_soon(&lock, "cancel/release").await,
        "a dropped release left the lock held"
    );
}

#[tokio::test]
async fn dropped_extend_leaves_the_guard_valid() {
    let lock = MemoryLock::new();
    let guard = lock.acquire("cancel/extend").await.expect("acquire");
    drop(guard.extend(Duration::from_secs(60)).now_or_never());
    assert!(!guard.is_lost());
    guard
        .extend(Duration::from_secs(60))
        .await
        .expect("extend after a dropped extend");
    guard.release().await.expect("release");
}

#[tokio::test]
async fn dropped_with_lock_drops_the_body_and_releases() {
    let lock = MemoryLock::new();
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let run = lock.with_lock("cancel/with_lock", || async move {
        let _flag = SetOnDrop(flag);
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(50), run)
            .await
            .is_err(),
        "body finished early"
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body outlived the dropped with_lock"
    );
    assert!(
        free_soon(&lock, "cancel/with_lock").await,
        "a dropped with_lock left the lock held"
    );
}

#[tokio::test(start_paused = true)]
async fn without_renewal_the_lost_signal_fires_at_lease_end() {
    let lock = MemoryLock::new();
    let options = AcquireOptions::builder()
        .lease(Duration::from_secs(3))
        .auto_renew(false)
        .build()
        .expect("options");
    let guard = lock
        .acquire_timeout_with("lease/no-renew", &options)
        .await
        .expect("acquire");
    tokio::time::sleep(Duration::from_millis(2900)).await;
    assert!(!guard.is_lost(), "lost fired before the lease ended");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        guard.is_lost(),
        "lost did not fire when the unrenewed lease ended"
    );
    let other = lock.try_acquire("lease/no-renew").await.expect("try");
    assert!(other.is_some(), "the expired lease still blocks others");
}

#[tokio::test(start_paused = true)]
async fn with_renewal_the_hold_outlives_many_leases() {
    let lock = MemoryLock::new();
    let options = AcquireOptions::builder()
        .lease(Duration::from_secs(3))
        .build()
        .expect("options");
    let guard = lock
        .acquire_timeout_with("lease/renew", &options)
        .await
        .expect("acquire");
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(!guard.is_lost());
    assert!(
        lock.try_acquire("lease/renew")
            .await
            .expect("try")
            .is_none()
    );
    guard.release().await.expect("release");
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
