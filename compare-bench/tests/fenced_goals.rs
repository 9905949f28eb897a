//! The least fenced locks in the goals' explanations: each hands out a fencing token with the
//! fewest server steps, and a goal against a peer that hands out none says whether that bound
//! reaches it. Their names keep them out of the peers' rows.

mod support;

use compare_bench::report::goals;
use compare_bench::scenarios::{Kind, RedisFence};
use support::{at_32, goal, uncontended};

/// Both Redis uncontended goals also cite the least lock that fences the way distlock does:
/// arrival order kept (a grant reads the waiter queue) and the fence floored at the server
/// clock. When it falls short of the goal's ratio, no lock that fences this way reaches the
/// goal; when it reaches it, distlock's further work is the gap. The least fenced locks that
/// keep neither (`SET NX PX` and an `INCR`, one script or one `MULTI`/`EXEC`) are not cited
/// even when faster: they are not the design. Their names keep all three out of the
/// hand-written peer's and rslock's rows.
#[test]
fn redis_uncontended_misses_cite_the_least_fifo_fenced_lock() {
    let fenced = Kind::RedisFencedFloor(RedisFence::Transaction);
    let scripted = Kind::RedisFencedFloor(RedisFence::Script);
    let clocked = Kind::RedisFencedFloor(RedisFence::Clocked);
    for floor in [fenced, scripted, clocked] {
        assert!(floor.uncontended() && !floor.contends() && floor.backend() == "redis");
    }
    for (least, hand_written, with_rslock) in [
        (
            900.0,
            "reaches only x0.90 of the peer: no lock",
            "reaches only x0.95 of the peer",
        ),
        (
            1200.0,
            "reaches x1.20 of the peer (goal x1): fencing",
            "reaches x1.26 of the peer (goal x1.15)",
        ),
    ] {
        let records = vec![
            uncontended(Kind::Distlock("redis").system(), "redis", 600.0),
            uncontended(Kind::RedisPoll(1).system(), "redis", 1000.0),
            uncontended(Kind::RsLock.system(), "redis", 950.0),
            uncontended(Kind::RedisScriptFloor.system(), "redis", 700.0),
            uncontended(clocked.system(), "redis", least),
            uncontended(fenced.system(), "redis", least + 150.0),
            uncontended(scripted.system(), "redis", least + 100.0),
        ];
        let goals = goals(&records);
        let cited = format!("the least fenced lock ({}", clocked.system());
        for (peer, said) in [
            ("hand-written SET NX PX", hand_written),
            ("rslock", with_rslock),
        ] {
            let missed = goal(&goals, &["Redis uncontended", peer]);
            assert_eq!(missed.met, Some(false), "{missed:?}");
            assert!(
                missed.why.contains(&cited) && missed.why.contains(said),
                "{missed:?}"
            );
            for other in [fenced, scripted] {
                assert!(!missed.why.contains(&other.system()), "{missed:?}");
            }
            let floor = format!("floor: {} 700", Kind::RedisScriptFloor.system());
            assert!(missed.why.starts_with(&floor), "{missed:?}");
        }
    }
}

/// PostgreSQL's uncontended goal also cites the least fenced lock (the `INSERT`/`DELETE` floor
/// whose insert takes a sequence's next value as the fence); its name keeps it out of the
/// row-lock peers' rows even when it is the fastest.
#[test]
fn postgres_uncontended_misses_cite_the_least_fenced_lock() {
    let fenced = Kind::PgFencedFloor;
    assert!(fenced.uncontended() && !fenced.contends() && fenced.backend() == "postgres");
    for (least, said) in [
        (950.0, "reaches only x0.95 of the peer: no lock"),
        (1100.0, "reaches x1.10 of the peer (goal x1): fencing"),
    ] {
        let records = vec![
            uncontended(Kind::Distlock("postgres").system(), "postgres", 600.0),
            uncontended(Kind::PgFloor.system(), "postgres", 1000.0),
            uncontended(Kind::PgRow(1).system(), "postgres", 900.0),
            uncontended(Kind::PgStatementFloor.system(), "postgres", 700.0),
            uncontended(fenced.system(), "postgres", least),
        ];
        let goals = goals(&records);
        let missed = goal(&goals, &["PostgreSQL uncontended"]);
        assert_eq!(missed.met, Some(false), "{missed:?}");
        let floor = format!("floor: {} 700", Kind::PgStatementFloor.system());
        assert!(
            missed.why.starts_with(&floor) && missed.why.contains("x0.86 of it"),
            "{missed:?}"
        );
        let cited = format!("the least fenced lock ({}", fenced.system());
        assert!(
            missed.why.contains(&cited) && missed.why.contains(said),
            "{missed:?}"
        );
    }
}

/// MySQL's 32-client goal also cites the fenced floor, the same interrupt with one write of the
/// lock row per grant: as the bound of any fenced table lock woken that way when it falls short
/// of the goal, and as proof that distlock's further statements are the gap when it reaches it.
/// The floors' names keep each one picked for its own part only.
#[test]
fn mysql_contention_misses_say_whether_one_row_write_per_grant_reaches_the_goal() {
    let fenced = Kind::MySqlFencedFloor;
    assert!(fenced.contends() && fenced.uncontended() && fenced.backend() == "mysql");
    for (least, said) in [
        (
            4500.0,
            "reaches only x0.30 of the peer: no lock that fences this way reaches the goal",
        ),
        (
            8250.0,
            "reaches x0.55 of the peer (goal x0.5): fencing this way allows the goal",
        ),
    ] {
        let records = vec![
            at_32(Kind::Distlock("mysql").system(), "mysql", 1000.0, 0.0),
            at_32(Kind::MySqlGetLock.system(), "mysql", 15_000.0, 0.0),
            at_32(Kind::MySqlStatementFloor.system(), "mysql", 1050.0, 0.0),
            at_32(Kind::MySqlKillFloor.system(), "mysql", 9000.0, 0.0),
            at_32(fenced.system(), "mysql", least, 0.0),
        ];
        let goals = goals(&records);
        let pairs = goal(&goals, &["MySQL/MariaDB 32 clients"]);
        assert_eq!(pairs.met, Some(false), "{pairs:?}");
        let bare = format!(
            "the bare wake-up alone ({}, 9000",
            Kind::MySqlKillFloor.system()
        );
        let cited = format!("the least fenced lock ({}", fenced.system());
        assert!(
            pairs.why.contains(&bare) && pairs.why.contains(&cited) && pairs.why.contains(said),
            "{pairs:?}"
        );
        let floor = format!("floor: {} 1050", Kind::MySqlStatementFloor.system());
        assert!(pairs.why.starts_with(&floor), "{pairs:?}");
    }
}

/// MySQL's uncontended goal cites the fenced floor with one client: one `UPDATE` to take the
/// lock row and one to free it.
#[test]
fn mysql_uncontended_misses_cite_the_least_fenced_lock() {
    let fenced = Kind::MySqlFencedFloor;
    for (least, said) in [
        (900.0, "reaches only x0.45 of the peer: no lock"),
        (1100.0, "reaches x0.55 of the peer (goal x0.5): fencing"),
    ] {
        let records = vec![
            uncontended(Kind::Distlock("mysql").system(), "mysql", 600.0),
            uncontended(Kind::MySqlGetLock.system(), "mysql", 2000.0),
            uncontended(Kind::MySqlStatementFloor.system(), "mysql", 700.0),
            uncontended(fenced.system(), "mysql", least),
        ];
        let goals = goals(&records);
        let missed = goal(&goals, &["MySQL/MariaDB uncontended"]);
        assert_eq!(missed.met, Some(false), "{missed:?}");
        let floor = format!("floor: {} 700", Kind::MySqlStatementFloor.system());
        let cited = format!("the least fenced lock ({}", fenced.system());
        assert!(
            missed.why.starts_with(&floor)
                && missed.why.contains(&cited)
                && missed.why.contains(said),
            "{missed:?}"
        );
    }
}
