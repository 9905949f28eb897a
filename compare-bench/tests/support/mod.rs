//! Records for the goal tests.

use compare_bench::record::Record;
use compare_bench::report::Goal;

/// A record of `ops_per_s` pairs per second and a p99 wait of `p99_us`.
pub(crate) fn throughput(
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

/// An uncontended (latency) record of `system` on `backend`: one client, `pairs` per second.
pub(crate) fn uncontended(system: String, backend: &str, pairs: f64) -> Record {
    throughput("latency", system, backend, 1, pairs, 0.0)
}

/// A contention record of `system` on `backend` at 32 clients: its pairs/s and p99 wait (µs).
#[allow(dead_code)] // the latency goals' tests need no contention records
pub(crate) fn at_32(system: String, backend: &str, pairs: f64, p99_us: f64) -> Record {
    throughput("contention", system, backend, 32, pairs, p99_us)
}

/// The goal whose text contains every one of `words`; a test that names none fails, listing
/// the goals there are.
pub(crate) fn goal<'a>(goals: &'a [Goal], words: &[&str]) -> &'a Goal {
    let found = goals
        .iter()
        .find(|g| words.iter().all(|word| g.goal.contains(word)));
    found.unwrap_or_else(|| {
        let texts: Vec<&str> = goals.iter().map(|g| g.goal.as_str()).collect();
        panic!("no goal contains {words:?}: {texts:#?}")
    })
}
