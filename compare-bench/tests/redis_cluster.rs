//! The Redis Cluster rows: swept beside single Redis, reported next to it, and kept apart from
//! single Redis's goals.

use compare_bench::record::Record;
use compare_bench::report::{self, Run, goals};
use compare_bench::scenarios::{Kind, REDIS_CLUSTER, all_kinds};

fn row(scenario: &str, backend: &'static str, clients: usize, ops_per_s: f64) -> Record {
    let mut record = Record::new(scenario, &Kind::Distlock(backend).system(), backend);
    record.clients = clients;
    record.ops_per_s = ops_per_s;
    record.p50_us = 200.0;
    record.p99_us = 400.0;
    record
}

#[test]
fn the_cluster_is_swept_right_after_single_redis() {
    let kinds = all_kinds();
    let redis = kinds.iter().position(|k| *k == Kind::Distlock("redis"));
    let cluster = kinds
        .iter()
        .position(|k| *k == Kind::Distlock(REDIS_CLUSTER));
    assert_eq!(cluster, redis.map(|i| i + 1), "{kinds:?}");
    assert_eq!(Kind::Distlock(REDIS_CLUSTER).backend(), REDIS_CLUSTER);
}

#[test]
fn cluster_rows_do_not_count_as_single_redis_for_the_goals() {
    // Only cluster rows: every Redis goal stays unmeasured.
    let records = vec![
        row("latency", REDIS_CLUSTER, 1, 5000.0),
        row("contention", REDIS_CLUSTER, 32, 2000.0),
    ];
    let goals = goals(&records);
    assert_eq!(goals[0].met, None, "{:?}", goals[0]);
    assert_eq!(goals[1].met, None, "{:?}", goals[1]);
}

#[test]
fn the_headline_has_a_cluster_row_after_redis_and_says_what_it_is() {
    let records = vec![
        row("latency", "redis", 1, 5303.0),
        row("latency", REDIS_CLUSTER, 1, 4321.0),
        row("contention", "redis", 32, 2068.0),
        row("contention", REDIS_CLUSTER, 32, 1987.0),
    ];
    let out = tempfile::tempdir().expect("temp dir");
    let header = serde_json::json!({"header": true, "started_utc": "now"});
    let run = Run {
        header: &header,
        records: &records,
        skipped: &[],
        command: "compare-bench --backends redis,redis-cluster",
    };
    report::write(out.path(), &run).expect("report written");
    let headline = std::fs::read_to_string(out.path().join("headline.md")).expect("headline");
    let redis = headline.find("| redis | 5303 |").expect("redis row");
    let cluster = headline
        .find("| redis-cluster | 4321 |")
        .expect("cluster row");
    assert!(redis < cluster, "{headline}");
    assert!(headline.contains("1987"), "{headline}");
    assert!(headline.contains("3 primaries"), "{headline}");
}
