//! Read-write locks: readers share, a writer is alone, a waiting writer blocks new readers and
//! is never starved, and a write hold's token is above every earlier one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lock_core::{Claim, DistributedLock, LockGuard, LockName, RwLockExt};

use super::support::{client, client_if, unique_name};
use crate::{ConformanceTarget, Occupancy, scaled_ms};

async fn hold(lock: &Arc<dyn DistributedLock>, name: &LockName, claim: Claim) -> LockGuard {
    lock.acquire_rw_timeout(name, claim, scaled_ms(60_000))
        .await
        .unwrap_or_else(|error| panic!("{claim} hold: {error}"))
}

/// 12 clients take one read-write lock 25 times each, one in four as writers; an occupancy
/// detector sees readers together at some point and never a writer with anyone.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave holds on its own uniquely named lock until
/// their leases end; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn rw_readers_share_and_writers_exclude(target: Arc<dyn ConformanceTarget>) {
    const CLIENTS: usize = 12;
    const ROUNDS: usize = 25;
    let case = "rw_readers_share_and_writers_exclude";
    let Some(first) = client_if(&target, case, |c| c.rw_lock, "read-write locks").await else {
        return;
    };
    let name = unique_name(case);
    let occupancy = Arc::new(Occupancy::new());
    let mut tasks = Vec::new();
    for id in 0..CLIENTS {
        let lock = if id == 0 {
            Arc::clone(&first)
        } else {
            client(&target).await
        };
        let (name, occupancy) = (name.clone(), Arc::clone(&occupancy));
        tasks.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                let writer = (id + round) % 4 == 0;
                let claim = if writer { Claim::Write } else { Claim::Read };
                let guard = hold(&lock, &name, claim).await;
                if writer {
                    occupancy.enter_exclusive();
                } else {
                    occupancy.enter_shared();
                }
                tokio::time::sleep(Duration::from_millis(rand::random_range(1..6))).await;
                if writer {
                    occupancy.leave_exclusive();
                } else {
                    occupancy.leave_shared();
                }
                guard.release().await.expect("release");
            }
        }));
    }
    for task in tasks {
        task.await.expect("client task");
    }
    assert_eq!(
        occupancy.exclusive_overlaps(),
        0,
        "a writer held beside someone"
    );
    assert!(occupancy.max_shared() >= 2, "readers never held together");
}

/// While a reader holds and a writer waits, a new reader is refused; the writer is granted
/// once the reader releases, with a larger token than both reads before it.
///
/// # Cancel safety
///
/// As [`rw_readers_share_and_writers_exclude`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn rw_waiting_writer_blocks_new_readers(target: Arc<dyn ConformanceTarget>) {
    let case = "rw_waiting_writer_blocks_new_readers";
    let Some(a) = client_if(&target, case, |c| c.rw_lock, "read-write locks").await else {
        return;
    };
    let (b, c) = (client(&target).await, client(&target).await);
    let name = unique_name(case);
    let reader = hold(&a, &name, Claim::Read).await;
    let second = c
        .try_read(&name)
        .await
        .expect("try_read")
        .expect("readers share");
    second.release().await.expect("release");
    let writer = {
        let (b, name) = (Arc::clone(&b), name.clone());
        tokio::spawn(async move { hold(&b, &name, Claim::Write).await })
    };
    tokio::time::sleep(scaled_ms(300)).await;
    assert!(
        !writer.is_finished(),
        "a writer was granted beside a reader"
    );
    let late = c
        .try_read(&name)
        .await
        .expect("try_read behind a waiting writer");
    assert!(
        late.is_none(),
        "a new reader went ahead of a waiting writer"
    );
    let read_token = reader.fencing_token();
    reader.release().await.expect("release");
    let writer = tokio::time::timeout(scaled_ms(5000), writer)
        .await
        .expect("the writer was not granted after the reader left")
        .expect("writer task");
    assert!(
        writer.fencing_token() > read_token,
        "write token not above the reads'"
    );
    assert!(
        c.try_read(&name).await.expect("try_read").is_none(),
        "read beside the writer"
    );
    writer.release().await.expect("release");
    let after = c
        .try_read(&name)
        .await
        .expect("try_read")
        .expect("free again");
    after.release().await.expect("release");
}

/// Three readers keep the lock read-held without a gap for 4 s; a writer must still get it
/// within 2 s: readers arriving after it wait.
///
/// # Cancel safety
///
/// As [`rw_readers_share_and_writers_exclude`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn rw_writers_are_not_starved(target: Arc<dyn ConformanceTarget>) {
    let case = "rw_writers_are_not_starved";
    let Some(writer) = client_if(&target, case, |c| c.rw_lock, "read-write locks").await else {
        return;
    };
    let name = unique_name(case);
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for id in 0..3_u64 {
        let lock = client(&target).await;
        let (name, stop) = (name.clone(), Arc::clone(&stop));
        readers.push(tokio::spawn(async move {
            tokio::time::sleep(scaled_ms(40 * id)).await;
            while !stop.load(Ordering::SeqCst) {
                let guard = hold(&lock, &name, Claim::Read).await;
                tokio::time::sleep(scaled_ms(120)).await;
                guard.release().await.expect("release");
            }
        }));
    }
    tokio::time::sleep(scaled_ms(500)).await;
    let outcome = writer
        .acquire_rw_timeout(&name, Claim::Write, scaled_ms(2000))
        .await;
    stop.store(true, Ordering::SeqCst);
    let guard = outcome.unwrap_or_else(|error| panic!("the writer starved: {error}"));
    guard.release().await.expect("release");
    for reader in readers {
        reader.await.expect("reader task");
    }
}
