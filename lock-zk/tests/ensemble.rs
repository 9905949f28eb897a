//! A 3-node ensemble losing its leader while a lock is held and 8 clients wait: no two holders
//! overlap, every waiter gets the lock, and fencing tokens rise in grant order.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind, LockGuard};
use lock_testkit::scaled_ms;
use lock_testkit::servers::ZkEnsemble;
use lock_zk::ZkLock;
use support::{eventually, lock_nodes, unique};
use tokio::time::Instant;

const WAITERS: usize = 8;

/// Holders inside the critical section, overlaps seen, and tokens in grant order.
#[derive(Default)]
struct Detector {
    inside: AtomicUsize,
    overlaps: AtomicUsize,
    tokens: Mutex<Vec<u64>>,
}

impl Detector {
    async fn hold(&self, guard: LockGuard, hold: Duration) {
        if self.inside.fetch_add(1, Ordering::SeqCst) != 0 {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(guard.fencing_token());
        tokio::time::sleep(hold).await;
        self.inside.fetch_sub(1, Ordering::SeqCst);
        if let Err(error) = guard.release().await {
            // A release lost to the election is cleaned up by the session; not an overlap.
            eprintln!("release failed: {error}");
        }
    }
}

/// Acquires, retrying when the election makes the ensemble briefly unavailable.
async fn acquire_through_election(lock: &ZkLock, name: &lock_core::LockName) -> LockGuard {
    let started = Instant::now();
    loop {
        match lock.acquire_timeout(name, scaled_ms(60_000)).await {
            Ok(guard) => return guard,
            Err(error) if error.kind() == ErrorKind::Unavailable => {
                assert!(started.elapsed() < scaled_ms(90_000), "no grant: {error}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => panic!("acquire: {error}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leader_killed_while_held_no_overlap_every_waiter_acquires() {
    let Some(mut ensemble) = lock_testkit::require(ZkEnsemble::start(3)) else {
        return;
    };
    let url = format!("{}?session_timeout=10s", ensemble.url());
    let name = unique("ensemble");
    let detector = Arc::new(Detector::default());
    let holder = support::connect(&url).await;
    let guard = holder
        .acquire_timeout(&name, scaled_ms(10_000))
        .await
        .expect("acquire");
    let mut tasks = Vec::new();
    for _ in 0..WAITERS {
        let lock = support::connect(&url).await;
        let (name, detector) = (name.clone(), Arc::clone(&detector));
        tasks.push(tokio::spawn(async move {
            let guard = acquire_through_election(&lock, &name).await;
            detector.hold(guard, Duration::from_millis(50)).await;
        }));
    }
    let admin = support::connect(&url).await;
    let mut queued = 0;
    let started = Instant::now();
    while queued != WAITERS + 1 {
        assert!(
            started.elapsed() < scaled_ms(20_000),
            "{queued} of {} nodes queued",
            WAITERS + 1
        );
        queued = lock_nodes(&admin, &name).await.len();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(admin);
    let leader = ensemble.leader().expect("a leader");
    ensemble.nodes()[leader].process().kill();
    eprintln!("killed leader node {}", leader + 1);
    eventually(scaled_ms(30_000), "a new leader", || {
        ensemble.leader().is_some_and(|new| new != leader)
    })
    .await;
    detector.hold(guard, Duration::from_millis(50)).await;
    for task in tasks {
        tokio::time::timeout(scaled_ms(120_000), task)
            .await
            .expect("a waiter never acquired")
            .expect("waiter task");
    }
    assert_eq!(
        detector.overlaps.load(Ordering::SeqCst),
        0,
        "two holders overlapped"
    );
    let tokens = detector
        .tokens
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    assert_eq!(
        tokens.len(),
        WAITERS + 1,
        "not every client acquired: {tokens:?}"
    );
    assert!(
        tokens.windows(2).all(|pair| pair[0] < pair[1]),
        "fencing tokens out of grant order: {tokens:?}"
    );
}
