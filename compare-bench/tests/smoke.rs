//! A tiny run of the real driver against memory and SQLite, the overlap detector failing on a
//! broken lock, and a report written from the results.

use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::{Contender, DistlockContender, Run, contend};
use compare_bench::report;
use compare_bench::scenarios::contention;
use lock_core::{DistributedLock, LockName};
use lock_testkit::broken::{Breakage, BrokenLock};

fn run(hold_ms: u64) -> Run {
    Run {
        duration: Duration::from_millis(300),
        hold: Duration::from_millis(hold_ms),
    }
}

async fn clients(
    lock: impl Fn() -> Arc<dyn DistributedLock>,
    count: usize,
) -> Vec<Arc<dyn Contender>> {
    let name = LockName::new("smoke/lock").expect("name");
    (0..count)
        .map(|_| Arc::new(DistlockContender::new(lock(), &name)) as Arc<dyn Contender>)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlap_detector_catches_a_lock_without_mutual_exclusion() {
    let broken = BrokenLock::new(Breakage::NoMutualExclusion);
    let outcome = contend(clients(|| Arc::new(broken.clone()), 4).await, run(1))
        .await
        .expect("run");
    assert!(
        outcome.overlaps > 0,
        "4 clients of a lock that grants everyone never overlapped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_and_sqlite_runs_count_grants_and_no_overlaps() {
    let memory = distlock::connect("memory://compare-bench-smoke")
        .await
        .expect("memory");
    let outcome = contend(clients(|| Arc::clone(&memory), 4).await, run(0))
        .await
        .expect("memory run");
    assert_eq!(outcome.overlaps, 0);
    assert!(
        outcome.samples.len() > 10,
        "only {} grants",
        outcome.samples.len()
    );
    let memory_record = contention::record("distlock", "memory", 4, &outcome);
    assert!(
        memory_record.handoffs > 0,
        "4 clients never handed the lock over"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("locks.db").display());
    let mut sqlite_clients = Vec::new();
    for _ in 0..3 {
        let lock = distlock::connect(&url).await.expect("sqlite");
        sqlite_clients.extend(clients(|| Arc::clone(&lock), 1).await);
    }
    let outcome = contend(sqlite_clients, run(0)).await.expect("sqlite run");
    assert_eq!(outcome.overlaps, 0);
    assert!(!outcome.samples.is_empty());
    let sqlite_record = contention::record("distlock", "sqlite", 3, &outcome);

    let header = serde_json::json!({"header": true, "started_utc": "test"});
    let records = [memory_record, sqlite_record];
    let out = dir.path().join("report");
    let written = report::Run {
        header: &header,
        records: &records,
        skipped: &[],
        command: "smoke",
    };
    report::write(&out, &written).expect("write the report");
    let markdown = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(markdown.contains("## 2. Contention sweep"));
    assert!(markdown.contains("## 1. Latency (uncontended)\n\nNot measured in this run."));
    let lines = std::fs::read_to_string(out.join("results.jsonl")).expect("results.jsonl");
    assert_eq!(lines.lines().count(), 3, "header + 2 results");
    let svg = std::fs::read_to_string(out.join("contention_throughput.svg")).expect("chart");
    assert!(svg.starts_with("<svg") && svg.contains("sqlite"));
}
