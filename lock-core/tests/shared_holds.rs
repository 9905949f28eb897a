//! Semaphores and read-write locks on the memory backend: nesting in one task, cancel safety
//! of waiting acquisitions, and names of different kinds kept apart.

use std::time::Duration;

use lock_core::{
    Claim, DistributedLock, DistributedLockExt, ErrorKind, LockName, MemoryLock, RwLockExt,
    SemaphoreExt,
};

#[tokio::test]
async fn a_read_nested_in_a_write_reenters_and_a_write_in_a_read_is_refused() {
    let locks = &MemoryLock::new();
    let (outer, inner) = locks
        .with_write("cache", |hold| async move {
            let inner = locks
                .with_read("cache", |nested| async move { nested.fencing_token() })
                .await;
            (hold.fencing_token(), inner)
        })
        .await
        .expect("with_write");
    assert_eq!(
        inner.expect("nested read"),
        outer,
        "the nested read took a hold of its own"
    );
    let refused = locks
        .with_read("cache", |_| async {
            locks.with_write("cache", |_| async {}).await
        })
        .await
        .expect("with_read");
    let error = refused.expect_err("a write inside a read of the same name");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
}

#[tokio::test]
async fn a_nested_permit_uses_the_enclosing_one() {
    let locks = MemoryLock::new();
    let nested = tokio::time::timeout(
        Duration::from_secs(5),
        locks.with_permit("api", 1, |_| async {
            locks
                .with_permit("api", 1, |permit| async move { permit.fencing_token() })
                .await
        }),
    )
    .await
    .expect("a nested permit of a 1-permit semaphore waited for itself");
    assert!(nested.expect("outer").expect("inner") > 0);
}

/// `write` is cancel safe: a dropped waiting writer stops blocking new readers at once.
#[tokio::test]
async fn a_dropped_waiting_writer_stops_blocking_readers() {
    let locks = MemoryLock::new();
    let reader = locks.read("report").await.expect("read");
    let waiting = tokio::time::timeout(Duration::from_millis(100), locks.write("report")).await;
    assert!(waiting.is_err(), "a writer was granted beside a reader");
    let late = locks.try_read("report").await.expect("try_read");
    assert!(late.is_some(), "a dropped writer still blocks readers");
    reader.release().await.expect("release");
}

/// `acquire_permit` is cancel safe: dropped waiters take no permit and leave no place in line.
#[tokio::test]
async fn dropped_permit_waiters_leave_every_permit_free() {
    let locks = MemoryLock::new();
    let held = locks.acquire_permit("pool", 2).await.expect("permit");
    let second = locks.acquire_permit("pool", 2).await.expect("permit");
    for _ in 0..5 {
        let waiting =
            tokio::time::timeout(Duration::from_millis(20), locks.acquire_permit("pool", 2)).await;
        assert!(waiting.is_err(), "a third permit of 2");
    }
    drop((held, second));
    let (a, b) = (
        locks
            .acquire_permit_timeout("pool", 2, Duration::from_secs(5))
            .await,
        locks
            .acquire_permit_timeout("pool", 2, Duration::from_secs(5))
            .await,
    );
    let (a, b) = (
        a.expect("first permit after the drops"),
        b.expect("second permit after the drops"),
    );
    assert!(b.fencing_token() > a.fencing_token());
}

#[tokio::test]
async fn one_name_as_mutex_semaphore_and_rw_lock_is_three_objects() {
    let locks = MemoryLock::new();
    let mutex = locks.acquire("shared-name").await.expect("mutex");
    let permit = locks
        .try_acquire_permit("shared-name", 1)
        .await
        .expect("try");
    let write = locks.try_write("shared-name").await.expect("try");
    assert!(permit.is_some() && write.is_some());
    mutex.release().await.expect("release");
    assert_eq!(
        locks
            .acquire_claim_with(
                &LockName::new("x").expect("name"),
                Claim::permit(0),
                &locks.default_options()
            )
            .await
            .expect_err("0 permits")
            .kind(),
        ErrorKind::InvalidInput
    );
}
