//! Compile-time checks of the public API's shape: object safety and `Send` futures.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{
    AcquireOptions, DistributedLock, DistributedLockExt, ErrorKind, LockGuard, LockName, MemoryLock,
};

fn assert_send<T: Send>(value: T) -> T {
    value
}

fn assert_send_sync<T: Send + Sync>() {}

/// Every future a user awaits is `Send`, so it can run in `tokio::spawn`. This is checked by
/// the compiler; the test body also runs them.
#[tokio::test]
async fn user_futures_are_send_and_dyn_lock_works() {
    assert_send_sync::<LockGuard>();
    assert_send_sync::<Arc<dyn DistributedLock>>();
    let lock: Arc<dyn DistributedLock> = Arc::new(MemoryLock::new());
    let name = LockName::new("api/shape").expect("valid name");
    let options = AcquireOptions::default();

    let guard = assert_send(lock.acquire(&name)).await.expect("acquire");
    assert_send(guard.extend(Duration::from_secs(5)))
        .await
        .expect("extend");
    assert_send(guard.release()).await.expect("release");
    let guard = assert_send(lock.try_acquire("api/shape"))
        .await
        .expect("try_acquire")
        .expect("free");
    drop(guard);
    let guard = assert_send(lock.acquire_timeout(name.clone(), Duration::from_secs(1)))
        .await
        .expect("acquire_timeout");
    drop(guard);
    let guard = assert_send(lock.acquire_with_options(&name, &options))
        .await
        .expect("with options");
    drop(guard);
    let guard = assert_send(lock.acquire_timeout_with(&name, &options))
        .await
        .expect("timeout with");
    drop(guard);
    let value = assert_send(lock.with_lock(&name, || async { 1 }))
        .await
        .expect("with_lock");
    let token =
        assert_send(lock.with_lock_guarded(&name, |h| async move { h.fencing_token() })).await;
    let with = assert_send(lock.with_lock_guarded_with(&name, &options, |_| async { 2 })).await;
    assert_eq!((value, with.expect("guarded with")), (1, 2));
    assert!(token.expect("guarded") > 0);
    let spawned = tokio::spawn({
        let lock = Arc::clone(&lock);
        async move { lock.with_lock("api/spawned", || async { 3 }).await }
    });
    assert_eq!(spawned.await.expect("join").expect("with_lock in spawn"), 3);
}

/// Invalid names and options fail with `InvalidInput` and a message saying what to fix.
#[tokio::test]
async fn invalid_input_says_what_to_fix() {
    let lock = MemoryLock::new();
    let error = lock.acquire("").await.expect_err("empty name accepted");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(error.to_string().contains("non-empty name"), "{error}");
    let mut options = AcquireOptions::default();
    options.lease = Duration::from_millis(1);
    let error = lock
        .acquire_with_options("ok", &options)
        .await
        .expect_err("1 ms lease accepted");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(error.to_string().contains("lease"), "{error}");
    let error = AcquireOptions::builder()
        .lease(Duration::ZERO)
        .build()
        .expect_err("zero lease accepted");
    assert!(error.to_string().contains("minimum"), "{error}");
}
