//! Separate processes through the facade (`distlock::connect("redis://...")`): a crashed
//! holder's lease frees the lock, and contending processes never overlap.
//!
//! Needs the `lock-holder` program: `cargo build -p lock-testkit --bins --features redis`.

mod support;

use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::holder::{Holder, finish_contender, start_contender};
use lock_testkit::{scaled, scaled_ms};
use tokio::time::Instant;

fn unique(case: &str) -> String {
    format!("processes/{case}/{:x}", rand::random::<u64>())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_holders_lease_frees_the_lock_for_a_waiter() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let name = unique("crash");
    let lease = scaled_ms(1000);
    let mut holder = Holder::acquire(&url, &name, Some(lease), scaled_ms(10_000));
    let lock = lock_redis::connect(&url).await.expect("connect");
    assert!(
        lock.try_acquire(&name).await.expect("try").is_none(),
        "the holder's lock was free"
    );
    holder.kill();
    let killed_at = Instant::now();
    let guard = lock
        .acquire_timeout(&name, scaled_ms(10_000))
        .await
        .expect("acquire after the holder crashed");
    let waited = killed_at.elapsed();
    assert!(
        waited <= lease + scaled(Duration::from_millis(500)),
        "the crashed holder's {lease:?} lease freed the lock only after {waited:?}"
    );
    assert!(
        guard.fencing_token() > holder.fencing_token(),
        "fencing token did not rise"
    );
    guard.release().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contending_processes_never_overlap() {
    let Some(url) = support::redis_url() else {
        return;
    };
    let name = unique("contend");
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("inside");
    let children: Vec<_> = (0..3)
        .map(|_| start_contender(&url, &name, 40, &marker))
        .collect();
    let mut all = Vec::new();
    for child in children {
        let report = finish_contender(child);
        assert_eq!(report.overlaps, 0, "two processes held the lock at once");
        assert!(
            report.tokens.windows(2).all(|pair| pair[0] < pair[1]),
            "{:?}",
            report.tokens
        );
        all.extend(report.tokens);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 120, "a fencing token was handed out twice");
}
