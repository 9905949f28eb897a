//! The JSON line shape and the goal verdicts.

use compare_bench::record::Record;
use compare_bench::report::goals;
use compare_bench::scenarios::Kind;

#[test]
fn every_line_has_the_required_fields() {
    let line = Record::new("contention", "distlock 0.1.0", "redis")
        .with("fewest", 3)
        .to_line();
    let value: serde_json::Value = serde_json::from_str(&line).expect("valid JSON");
    for field in [
        "system",
        "backend",
        "scenario",
        "clients",
        "ops",
        "seconds",
        "ops_per_s",
        "p50_us",
        "p99_us",
        "max_us",
        "overlaps",
        "handoffs",
        "fewest",
    ] {
        assert!(value.get(field).is_some(), "{field} missing from {line}");
    }
    assert!(!line.contains('\n'));
}

fn throughput(
    scenario: &str,
    kind_system: String,
    backend: &str,
    clients: usize,
    ops_per_s: f64,
    p99_us: f64,
) -> Record {
    let mut record = Record::new(scenario, &kind_system, backend);
    record.clients = clients;
    record.ops_per_s = ops_per_s;
    record.p99_us = p99_us;
    record
}

#[test]
fn redis_goals_follow_the_numbers() {
    let ours = Kind::Distlock("redis").system();
    let records = vec![
        throughput("latency", ours.clone(), "redis", 1, 1000.0, 0.0),
        throughput(
            "latency",
            Kind::RedisPoll(1).system(),
            "redis",
            1,
            900.0,
            0.0,
        ),
        throughput("latency", Kind::RsLock.system(), "redis", 1, 950.0, 0.0),
        throughput("contention", ours, "redis", 32, 500.0, 100.0),
        throughput(
            "contention",
            Kind::RsLock.system(),
            "redis",
            32,
            400.0,
            2000.0,
        ),
    ];
    let goals = goals(&records);
    // 1000 >= 900 but 1000 < 1.15 * 950: missed.
    assert_eq!(goals[0].met, Some(false), "{:?}", goals[0]);
    // 500 >= 400 and 100 <= 2000 / 10: met.
    assert_eq!(goals[1].met, Some(true), "{:?}", goals[1]);
    // Nothing measured for ZooKeeper here.
    assert_eq!(goals[2].met, None);
}

/// `--report-from` rebuilds records from their JSON lines: every field survives the trip.
#[test]
fn records_read_back_from_their_json_lines() {
    let record = Record::new("contention", "distlock 0.1.0", "redis")
        .with("fairness", "51..52")
        .with("setting_ms", 1000);
    let mut record = record;
    record.clients = 32;
    record.ops = 1234;
    record.seconds = 2.5;
    record.ops_per_s = 493.6;
    record.p50_us = 28710.0;
    record.p99_us = 41630.5;
    record.max_us = 50000.0;
    record.overlaps = 0;
    record.handoffs = 1200;
    let line: serde_json::Value = serde_json::from_str(&record.to_line()).expect("a JSON line");
    assert_eq!(Record::from_json(&line), Some(record));
    assert_eq!(
        Record::from_json(&serde_json::json!({"header": true})),
        None
    );
}
