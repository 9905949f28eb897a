//! A missed uncontended goal's explanation gives the spread of distlock's share of its floor
//! over the rounds both ran, beside the whole run's share.

mod support;

use compare_bench::report::goals;
use compare_bench::scenarios::Kind;
use compare_bench::scenarios::latency::ROUND_RATES;
use support::{goal, uncontended};

/// The PostgreSQL uncontended records of one run, distlock's and its floor's with these rounds.
fn postgres_run(ours: &[f64], floor: &[f64]) -> Vec<compare_bench::record::Record> {
    let mean = |rounds: &[f64]| rounds.iter().sum::<f64>() / rounds.len() as f64;
    vec![
        uncontended(Kind::Distlock("postgres").system(), "postgres", mean(ours))
            .with(ROUND_RATES, ours.to_vec()),
        uncontended(Kind::PgRow(1).system(), "postgres", 5000.0),
        uncontended(Kind::PgStatementFloor.system(), "postgres", mean(floor))
            .with(ROUND_RATES, floor.to_vec()),
    ]
}

#[test]
fn the_share_of_the_floor_is_given_round_by_round() {
    // Shares by round: 0.75, 1.2, 1.0, 0.9; sorted, the middle two average 0.95.
    let records = postgres_run(&[3000.0, 4800.0, 4000.0, 3600.0], &[4000.0; 4]);
    let judged = goals(&records);
    let judged = goal(&judged, &["PostgreSQL uncontended"]);
    assert_eq!(judged.met, Some(false), "{judged:?}");
    assert!(
        judged
            .why
            .contains("of it (its 4 rounds: x0.75 to x1.20, median x0.95):"),
        "{judged:?}"
    );
}

#[test]
fn rounds_that_do_not_pair_up_give_no_spread() {
    for (ours, floor) in [
        (&[3000.0, 3000.0][..], &[4000.0, 4000.0, 4000.0][..]),
        (&[3000.0][..], &[4000.0][..]),
        (&[3000.0, 3000.0][..], &[4000.0, 0.0][..]),
    ] {
        let judged = goals(&postgres_run(ours, floor));
        let judged = goal(&judged, &["PostgreSQL uncontended"]);
        assert_eq!(judged.met, Some(false), "{judged:?}");
        assert!(
            judged.why.contains(" of it: ") && !judged.why.contains("rounds:"),
            "{judged:?}"
        );
    }
}
