//! Records for the goal tests.

use compare_bench::record::Record;

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
