//! The metrics the engine, the lease scheduler and the guard emit, read back from a recording
//! recorder: each event counted exactly once.

use std::collections::HashMap;
use std::time::Duration;

use lock_core::telemetry::{ACQUISITIONS, HELD, HOLD_DURATION, LOST, RENEWALS, WAIT_DURATION};
use lock_core::{AcquireOptions, DistributedLockExt, LockName, MemoryLock};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// Every metric as `name{label=value,...}` (labels sorted) with its value.
fn readings(snapshotter: &Snapshotter) -> HashMap<String, DebugValue> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let mut labels: Vec<String> = key
                .labels()
                .map(|label| format!("{}={}", label.key(), label.value()))
                .collect();
            labels.sort();
            (format!("{}{{{}}}", key.name(), labels.join(",")), value)
        })
        .collect()
}

fn counter(readings: &HashMap<String, DebugValue>, key: &str) -> u64 {
    match readings.get(key) {
        Some(DebugValue::Counter(count)) => *count,
        None => 0,
        other => panic!("{key} is not a counter: {other:?}"),
    }
}

fn samples(readings: &HashMap<String, DebugValue>, key: &str) -> usize {
    match readings.get(key) {
        Some(DebugValue::Histogram(samples)) => samples.len(),
        None => 0,
        other => panic!("{key} is not a histogram: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_grants_two_time_outs_and_one_loss_are_counted_exactly() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");
    let locks = MemoryLock::new();
    for _ in 0..8 {
        locks
            .acquire("metrics/plain")
            .await
            .expect("grant")
            .release()
            .await
            .expect("release");
    }
    let held = locks.acquire("metrics/busy").await.expect("grant");
    for _ in 0..2 {
        let none = locks.try_acquire("metrics/busy").await.expect("try");
        assert!(none.is_none(), "the lock is held");
    }
    held.release().await.expect("release");
    let short = AcquireOptions::builder()
        .lease(Duration::from_millis(300))
        .build()
        .expect("valid");
    let doomed = locks.acquire_with_options("metrics/lost", &short).await;
    let doomed = doomed.expect("acquire").expect("free");
    assert!(locks.sever(&LockName::new("metrics/lost").expect("valid")));
    tokio::time::timeout(Duration::from_secs(5), doomed.lost().cancelled())
        .await
        .expect("the severed hold was lost");
    drop(doomed);
    tokio::time::sleep(Duration::from_millis(50)).await;

    let readings = readings(&snapshotter);
    let acquisitions = |outcome: &str| {
        counter(
            &readings,
            &format!("{ACQUISITIONS}{{backend=memory,outcome={outcome}}}"),
        )
    };
    assert_eq!(acquisitions("granted"), 10, "{readings:#?}");
    assert_eq!(acquisitions("timed_out"), 2, "{readings:#?}");
    assert_eq!(acquisitions("error"), 0, "{readings:#?}");
    let lost: u64 = ["lease_expired", "not_owner", "max_hold", "signalled"]
        .iter()
        .map(|cause| {
            counter(
                &readings,
                &format!("{LOST}{{backend=memory,cause={cause}}}"),
            )
        })
        .sum();
    assert_eq!(lost, 1, "{readings:#?}");
    let lost_renewal = format!("{RENEWALS}{{backend=memory,outcome=not_owner}}");
    assert_eq!(counter(&readings, &lost_renewal), 1, "{readings:#?}");
    let waits = samples(
        &readings,
        &format!("{WAIT_DURATION}{{backend=memory,outcome=granted}}"),
    ) + samples(
        &readings,
        &format!("{WAIT_DURATION}{{backend=memory,outcome=timed_out}}"),
    );
    assert_eq!(waits, 12, "one wait sample per acquisition");
    let holds = samples(&readings, &format!("{HOLD_DURATION}{{backend=memory}}"));
    assert_eq!(holds, 10, "one hold sample per guard");
    match readings.get(&format!("{HELD}{{backend=memory}}")) {
        Some(DebugValue::Gauge(value)) => assert_eq!(value.into_inner(), 0.0, "guards alive"),
        other => panic!("no held gauge: {other:?}"),
    }
}
