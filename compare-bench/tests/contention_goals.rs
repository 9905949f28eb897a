//! The 32-client goals' verdicts and the floors that explain their misses.

mod support;

use compare_bench::report::goals;
use compare_bench::scenarios::Kind;
use support::throughput;

/// PostgreSQL's 32-client goals are explained by the handoff floor of the same sweep: when
/// even that floor falls short of the goal's ratio to the peer, the explanation says so.
#[test]
fn postgres_contention_misses_are_explained_by_the_handoff_floor() {
    let ours = Kind::Distlock("postgres").system();
    let records = vec![
        throughput("contention", ours, "postgres", 32, 500.0, 0.0),
        throughput(
            "contention",
            Kind::PgAdvisory.system(),
            "postgres",
            32,
            5000.0,
            0.0,
        ),
        throughput(
            "contention",
            Kind::PgRow(1).system(),
            "postgres",
            32,
            2000.0,
            0.0,
        ),
        throughput(
            "contention",
            Kind::PgNotifyFloor.system(),
            "postgres",
            32,
            1600.0,
            0.0,
        ),
    ];
    assert!(Kind::PgNotifyFloor.contends() && !Kind::PgNotifyFloor.uncontended());
    let goals = goals(&records);
    let advisory = goals
        .iter()
        .find(|g| g.goal.contains("pg_advisory_lock"))
        .expect("advisory goal");
    assert_eq!(advisory.met, Some(false), "{advisory:?}");
    // The floor reaches 1600 / 5000 = 0.32 of the peer, below the goal's 0.5.
    assert!(
        advisory.why.contains("at 32 clients") && advisory.why.contains("x0.31 of it"),
        "{advisory:?}"
    );
    assert!(
        advisory.why.contains("reaches only x0.32 of the peer"),
        "{advisory:?}"
    );
}

/// Redis's 32-client goals are explained by distlock's own scripts sent from 32 bare clients
/// that wait on inboxes as distlock does, not by the bare `PUBLISH` handoff, which does none of
/// the queue's server work.
#[test]
fn redis_contention_misses_are_explained_by_the_script_queue_floor() {
    let ours = Kind::Distlock("redis").system();
    let records = vec![
        throughput("contention", ours, "redis", 32, 500.0, 4000.0),
        throughput(
            "contention",
            Kind::RsLock.system(),
            "redis",
            32,
            1000.0,
            20_000.0,
        ),
        throughput(
            "contention",
            Kind::RedisScriptFloor.system(),
            "redis",
            32,
            520.0,
            3000.0,
        ),
        throughput(
            "contention",
            Kind::RedisHandoffFloor.system(),
            "redis",
            32,
            5000.0,
            500.0,
        ),
    ];
    assert!(Kind::RedisScriptFloor.contends() && Kind::RedisScriptFloor.uncontended());
    let goals = goals(&records);
    let pairs = goals
        .iter()
        .find(|g| g.goal.starts_with("Redis 32 clients (FIFO)"))
        .expect("the 32-client pairs goal");
    assert_eq!(pairs.met, Some(false), "{pairs:?}");
    assert!(
        pairs.why.contains(&Kind::RedisScriptFloor.system())
            && pairs.why.contains("at 32 clients")
            && pairs.why.contains("x0.96 of it")
            && pairs.why.contains("the server's work bounds it"),
        "{pairs:?}"
    );
}
