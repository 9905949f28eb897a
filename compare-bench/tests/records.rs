//! The JSON line shape and the goal verdicts.

mod support;

use compare_bench::record::Record;
use compare_bench::report::goals;
use compare_bench::scenarios::Kind;
use support::{at_32, goal, uncontended};

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

#[test]
fn redis_goals_follow_the_numbers() {
    let ours = Kind::Distlock("redis").system();
    let records = vec![
        uncontended(ours.clone(), "redis", 1000.0),
        uncontended(Kind::RedisPoll(1).system(), "redis", 900.0),
        uncontended(Kind::RsLock.system(), "redis", 950.0),
        uncontended(Kind::RedisScriptFloor.system(), "redis", 900.0),
        at_32(ours, "redis", 500.0, 100.0),
        at_32(Kind::RsLock.system(), "redis", 400.0, 2000.0),
    ];
    let goals = goals(&records);
    // 1000 >= 1.0 x 900: met.
    assert_eq!(goals[0].met, Some(true), "{:?}", goals[0]);
    // 1000 < 1.15 x 950: missed, and the floor (900) says the client is not the bound.
    assert_eq!(goals[1].met, Some(false), "{:?}", goals[1]);
    assert!(goals[1].why.contains("x1.11 of it"), "{:?}", goals[1]);
    assert!(goals[1].why.contains("bounds it"), "{:?}", goals[1]);
    // 500 >= 0.8 x 400 and 100 <= 0.1 x 2000: met.
    assert_eq!(goals[2].met, Some(true), "{:?}", goals[2]);
    assert_eq!(goals[3].met, Some(true), "{:?}", goals[3]);
    // Nothing measured for ZooKeeper here.
    assert!(
        goals
            .iter()
            .filter(|g| g.goal.starts_with("ZooKeeper"))
            .all(|g| g.met.is_none())
    );
}

/// Redis's uncontended goals are explained by distlock's own scripts sent from a bare client:
/// when those scripts alone fall short of the goal's ratio, the explanation says so.
/// A miss of `backend`'s uncontended goal against `peer` (distlock 600 pairs/s, the peer
/// `peer_pairs`, the floor of distlock's own server work 700) is explained by that floor:
/// distlock is x0.86 of it, and the floor itself falls short of the goal's ratio to the peer.
/// The server CPU per pair each one cost is quoted beside it.
fn uncontended_miss_is_explained_by_the_own_floor(
    backend: &'static str,
    (peer, peer_pairs): (Kind, f64),
    floor: Kind,
    goal_text: &str,
) {
    let records = vec![
        uncontended(Kind::Distlock(backend).system(), backend, 600.0).with(SERVER_CPU, 160.0),
        uncontended(peer.system(), backend, peer_pairs).with(SERVER_CPU, 110.0),
        uncontended(floor.system(), backend, 700.0).with(SERVER_CPU, 150.0),
    ];
    assert!(floor.uncontended(), "{floor:?} runs uncontended");
    let goals = goals(&records);
    let missed = goal(&goals, &[goal_text]);
    assert_eq!(missed.met, Some(false), "{missed:?}");
    let floor_name = floor.system();
    assert!(
        missed.why.contains(&floor_name) && missed.why.contains("x0.86 of it"),
        "{missed:?}"
    );
    let reach = format!("reaches only x{:.2} of the peer", 700.0 / peer_pairs);
    assert!(missed.why.contains(&reach), "{missed:?}");
    let cpu = format!(
        "server CPU per pair: distlock 160 µs, floor 150 µs, {} 110 µs",
        peer.system()
    );
    assert!(missed.why.contains(&cpu), "{missed:?}");
}

const SERVER_CPU: &str = "server_cpu_us_per_pair";

#[test]
fn redis_uncontended_misses_are_explained_by_the_script_floor() {
    uncontended_miss_is_explained_by_the_own_floor(
        "redis",
        (Kind::RedisPoll(1), 1000.0),
        Kind::RedisScriptFloor,
        "hand-written SET NX PX",
    );
}

#[test]
fn postgres_uncontended_misses_are_explained_by_the_statement_floor() {
    uncontended_miss_is_explained_by_the_own_floor(
        "postgres",
        (Kind::PgFloor, 1000.0),
        Kind::PgStatementFloor,
        "PostgreSQL uncontended",
    );
}

/// distlock's uncontended ZooKeeper pair is a create and a delete of its own node (after a hold
/// that was alone, the next create learns its place from its zxid, without a listing), so the
/// node floor (that create and delete from a bare session) is its own floor: a miss says how much
/// of it distlock reaches, and how much of the create+delete floor that node allows.
#[test]
fn zookeeper_uncontended_misses_are_explained_by_the_node_floor() {
    let records = vec![
        uncontended(Kind::Distlock("zookeeper").system(), "zookeeper", 600.0),
        uncontended(Kind::ZkFloor.system(), "zookeeper", 1000.0),
        uncontended(Kind::ZkNodeFloor.system(), "zookeeper", 800.0),
        uncontended(Kind::ZkRecipeFloor.system(), "zookeeper", 700.0),
    ];
    let goals = goals(&records);
    let missed = goal(&goals, &["the create+delete floor"]);
    assert_eq!(missed.met, Some(false), "{missed:?}");
    let (node, recipe) = (Kind::ZkNodeFloor.system(), Kind::ZkRecipeFloor.system());
    assert!(
        missed.why.contains(&format!("floor: {node}")) && missed.why.contains("x0.75 of it"),
        "{missed:?}"
    );
    assert!(
        missed.why.contains("not the server") && missed.why.contains("reaches only x0.80"),
        "both gaps are named: distlock's client and the node's server work: {missed:?}"
    );
    assert!(!missed.why.contains(&recipe), "{missed:?}");
    assert!(
        !missed.why.contains("server CPU"),
        "no CPU was read, none is quoted: {missed:?}"
    );
}

/// When distlock reaches its node's floor and that node is what falls short of the
/// create+delete floor, the explanation puts the gap in the server's work for that node.
#[test]
fn a_zookeeper_miss_within_the_node_floor_is_the_server_work_of_the_node() {
    let records = vec![
        uncontended(Kind::Distlock("zookeeper").system(), "zookeeper", 860.0),
        uncontended(Kind::ZkFloor.system(), "zookeeper", 1000.0),
        uncontended(Kind::ZkNodeFloor.system(), "zookeeper", 880.0),
    ];
    let goals = goals(&records);
    let missed = goal(&goals, &["the create+delete floor"]);
    assert_eq!(missed.met, Some(false), "{missed:?}");
    assert!(
        missed.why.contains("x0.98 of it")
            && missed.why.contains("the server's work bounds it")
            && missed.why.contains("reaches only x0.88"),
        "{missed:?}"
    );
}

/// When the floor itself reaches the goal, a miss within 10 % of that floor is distlock's own
/// client work on top of it: the explanation must not put it on the server.
#[test]
fn a_miss_whose_floor_reaches_the_goal_is_put_on_the_client() {
    let records = vec![
        uncontended(Kind::Distlock("mysql").system(), "mysql", 4970.0),
        uncontended(Kind::MySqlGetLock.system(), "mysql", 10000.0),
        uncontended(Kind::MySqlStatementFloor.system(), "mysql", 5340.0),
    ];
    let goals = goals(&records);
    let missed = goal(&goals, &["MySQL/MariaDB uncontended"]);
    assert_eq!(missed.met, Some(false), "{missed:?}");
    assert!(missed.why.contains("x0.93 of it"), "{missed:?}");
    assert!(
        !missed.why.contains("the server's work bounds it"),
        "the floor reaches the goal, so the server's work does not bound distlock: {missed:?}"
    );
    assert!(
        missed
            .why
            .contains("the floor reaches x0.53 of the peer (goal x0.5)")
            && missed.why.contains("distlock's client work"),
        "{missed:?}"
    );
}

#[test]
fn mysql_uncontended_misses_are_explained_by_the_statement_floor() {
    uncontended_miss_is_explained_by_the_own_floor(
        "mysql",
        (Kind::MySqlGetLock, 2000.0),
        Kind::MySqlStatementFloor,
        "MySQL/MariaDB uncontended",
    );
}

/// The floors and the MySQL peers carry the words the goals (and `bench-goals.py`) match on, and
/// a miss is explained by the floor of the same run.
#[test]
fn floors_are_found_by_name_and_explain_a_miss() {
    let ours = Kind::Distlock("zookeeper").system();
    let records = vec![
        uncontended(ours, "zookeeper", 600.0),
        uncontended(Kind::ZkFloor.system(), "zookeeper", 1000.0),
        uncontended(Kind::ZkNodeFloor.system(), "zookeeper", 1000.0),
        uncontended(Kind::ZkRecipeFloor.system(), "zookeeper", 1000.0),
        uncontended(Kind::MySqlGetLock.system(), "mysql", 4000.0),
        uncontended(Kind::Distlock("mysql").system(), "mysql", 1000.0),
    ];
    assert!(Kind::ZkFloor.system().contains("create+delete floor"));
    // bench-goals.py finds the ZooKeeper floor by these words: the recipe floor must not match.
    assert!(!Kind::ZkRecipeFloor.system().contains("create+delete floor"));
    // Nor the node floor, which bench-goals.py must not take for distlock either.
    let node = Kind::ZkNodeFloor.system();
    assert!(!node.contains("create+delete floor") && !node.to_lowercase().contains("distlock"));
    assert!(Kind::MySqlGetLock.system().contains("GET_LOCK"));
    let goals = goals(&records);
    let zk = goal(&goals, &["create+delete floor"]);
    assert_eq!(zk.met, Some(false), "{zk:?}");
    assert!(
        zk.why.contains("x0.60 of it") && zk.why.contains("not the server"),
        "{zk:?}"
    );
    let mysql = goal(&goals, &["MySQL/MariaDB uncontended"]);
    // 1000 < 0.5 x 4000, and no row-lock floor was measured.
    assert_eq!(mysql.met, Some(false), "{mysql:?}");
    assert!(mysql.why.contains("no floor measured"), "{mysql:?}");
    assert!(!Kind::ZkFloor.contends() && !Kind::ZkNodeFloor.contends());
    assert!(Kind::MySqlGetLock.contends());
}

/// The 100,000-hold goals read the many-locks row of that count, and a renewal miss says how
/// many round trips each hold costs.
#[test]
fn held_goals_read_the_100k_row_and_explain_per_hold_renewals() {
    let many_on = |backend: &'static str, held: u64, round_trips: f64, bytes: f64| {
        let mut record = Record::new("many", &Kind::Distlock(backend).system(), backend)
            .with("held", held)
            .with("round_trips_per_renewal_period", round_trips)
            .with("client_bytes_per_lock", bytes);
        record.clients = 1;
        record
    };
    let many = |held: u64, round_trips: f64, bytes: f64| many_on("redis", held, round_trips, bytes);
    // The 10,000 row would meet both bounds; only the 100,000 row counts.
    let records = vec![
        many(10_000, 1.0, 100.0),
        many(100_000, 73_391.0, 2364.0),
        many_on("zookeeper", 10_000, 1.0, 100.0),
    ];
    let goals = goals(&records);
    let renewal = goal(&goals, &["Redis", "renewal"]);
    assert_eq!(renewal.met, Some(false), "{renewal:?}");
    assert!(renewal.why.contains("one by one"), "{renewal:?}");
    let memory = goal(&goals, &["Redis", "memory"]);
    assert_eq!(memory.met, Some(false), "{memory:?}");
    assert!(memory.measured.contains("2364"), "{memory:?}");
    // ZooKeeper ran but reached no 100,000 row: not measured, and the row says why; PostgreSQL
    // did not run the scenario at all: nothing to explain.
    let zookeeper = goal(&goals, &["ZooKeeper", "memory"]);
    assert_eq!(zookeeper.met, None, "{zookeeper:?}");
    assert!(zookeeper.why.contains("did not reach"), "{zookeeper:?}");
    let postgres = goal(&goals, &["PostgreSQL", "memory"]);
    assert_eq!(
        (postgres.met, postgres.why.as_str()),
        (None, ""),
        "{postgres:?}"
    );
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
