//! Section 9: leader failover, beside Curator's LeaderLatch.

use std::path::Path;

use crate::BenchResult;
use crate::chart;
use crate::record::Record;

use super::sections::label;
use super::{ms, num, of, table};

/// The section: a bar chart of the median kill-to-observed times, and every run in a table.
///
/// # Errors
///
/// The chart could not be drawn.
pub(super) fn election(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "election");
    let bars: Vec<(String, f64)> = runs.iter().map(|r| (label(r), r.p50_us / 1e3)).collect();
    chart::bars(
        &out.join("election.svg"),
        "Leader failover: SIGKILL of the leader to the new leader seen (median ms)",
        "ms",
        &bars,
        false,
    )?;
    let curator = runs.iter().find(|r| r.system.starts_with("Curator"));
    let ours = runs
        .iter()
        .find(|r| r.backend == "zookeeper" && r.system.starts_with("distlock"));
    let sentence = match (ours, curator) {
        (Some(ours), Some(curator)) => format!(
            "On ZooKeeper, with the same 2 s session timeout, distlock's observer sees the new \
             leader {} ms after the kill (its candidate leads after {} ms); Curator's follower \
             latch leads after {} ms: both wait for the dead leader's session to expire. ",
            num(ours.p50_us / 1e3),
            num(ours.number("led_p50_us").unwrap_or(f64::NAN) / 1e3),
            num(curator.p50_us / 1e3),
        ),
        _ => String::new(),
    };
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let led = |key| ms(r.number(key).unwrap_or(f64::NAN));
            vec![
                r.system.clone(),
                r.backend.clone(),
                r.ops.to_string(),
                ms(r.p50_us),
                ms(r.max_us),
                led("led_p50_us"),
                led("led_max_us"),
            ]
        })
        .collect();
    Ok(format!(
        "## 9. Leader failover\n\nAn election's leader runs in its own process and is killed with \
         SIGKILL while a candidate waits in another; an observer on a third connection follows the \
         election. Leases (Redis, PostgreSQL, MySQL) and session timeouts (ZooKeeper) are 2 s; the \
         leader renews at a third of its lease, so the candidate leads between two thirds of a \
         lease and one lease after the kill. Curator's LeaderLatch has no observer: its row times \
         the follower latch's own election. {sentence}\n\n![election](election.svg)\n\n{}\n",
        table(
            &[
                "system",
                "backend",
                "trials",
                "to observed p50 ms",
                "to observed max ms",
                "to led p50 ms",
                "to led max ms",
            ],
            &rows,
        )
    ))
}
