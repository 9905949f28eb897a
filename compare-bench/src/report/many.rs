//! Section 7: many locks held by one client, what the server and the client keep per held lock,
//! and what keeping the holds alive costs.

use std::collections::BTreeMap;
use std::path::Path;

use crate::BenchResult;
use crate::chart;
use crate::record::Record;
use crate::scenarios::many::MIN_HELD_FOR_CLIENT_MEMORY;

use super::{cell, num, of, table};

/// The client's heap bytes per hold (`field`); a reading over fewer holds than
/// [`MIN_HELD_FOR_CLIENT_MEMORY`] is the rest of the process's churn, not the holds.
fn client_memory(r: &Record, field: &str) -> String {
    if r.ops < MIN_HELD_FOR_CLIENT_MEMORY as u64 {
        return "n/a".into();
    }
    cell(r, field)
}

/// The section: acquisitions/s by locks held (chart), and per point the memory on both sides,
/// the renewal traffic and round trips per renewal period, the client's CPU and lost holds.
///
/// # Errors
///
/// The chart could not be drawn.
pub(super) fn many(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "many");
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &runs {
        lines
            .entry(r.backend.clone())
            .or_default()
            .push((r.clients.max(1) as f64 * r.ops as f64, r.ops_per_s));
    }
    chart::lines(
        &out.join("many.svg"),
        "Many locks: acquisitions/s by locks held (log-log)",
        "locks held",
        "acquisitions/s",
        &lines.into_iter().collect::<Vec<_>>(),
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.backend.clone(),
                r.ops.to_string(),
                num(r.ops_per_s),
                cell(r, "bytes_per_lock"),
                r.text("memory_source").unwrap_or("not measured").to_owned(),
                client_memory(r, "client_bytes_per_lock"),
                client_memory(r, "client_peak_bytes_per_lock"),
                cell(r, "server_requests_per_renewal_period"),
                cell(r, "round_trips_per_renewal_period"),
                cell(r, "client_cpu_ms_per_s"),
                cell(r, "lost_while_holding"),
            ]
        })
        .collect();
    let first = runs.first();
    let parallel = first
        .and_then(|r| r.number("parallel"))
        .map_or("16".into(), |n| n.to_string());
    let lease = first
        .and_then(|r| r.number("lease_ms"))
        .map_or("n/a".into(), |ms| format!("{} s", num(ms / 1e3)));
    Ok(format!(
        "## 7. Many locks\n\nOne client holds N distinct names at once ({parallel} acquisitions in \
         flight), taken with a {lease} lease. Memory per held lock = (reading while held - \
         reading before) / N, on the server (its own accounting) and in the client (heap bytes \
         live, counted by the allocator; from {MIN_HELD_FOR_CLIENT_MEMORY} holds up, below which the rest of the \
         process's allocations outweigh them). One renewal period (a third of the lease) \
         after the last grant, and half a period after the next batch of renewals went out \
         (where the client counts them, so that no batch falls on the window's edges), the \
         holds are kept for two more periods while nothing else runs. \
         The client's heap is read every 50 ms of those: its least reading is what the holds \
         cost between renewals (client bytes/lock), its greatest adds the renewals of a batch \
         in flight (peak). Over the same periods: the requests the server counted, the round \
         trips the client's renewals took (counted by the client: a pipeline of renew scripts \
         on Redis, a statement on SQL), the client's CPU, and holds lost by the end. The lease \
         scheduler sends a renewal falling due together with every hold of the service due \
         within half a period, so holds taken at scattered times renew together. \
         ZooKeeper renews nothing (the session keeps the holds): distlock confirms each hold \
         every third of the session timeout (set to the same 30 s here), to bound how long it \
         trusts it, by reading its node, which also finds a node deleted behind its back; the \
         holds asking together share multi-reads of 512 nodes, all sent at once, and keep no \
         watch of their own. A renewal waits for others until 5 ms pass without one (500 ms at most), and the \
         batch goes out as one round trip: Redis pipelines it (pipelines of 256 scripts, all \
         written before the first answer is read; the server still counts one script call per \
         hold), PostgreSQL and MySQL send one UPDATE.\n\n![many](many.svg)\n\n{}\n",
        table(
            &[
                "backend",
                "locks held",
                "acquisitions/s",
                "server bytes/lock",
                "memory source",
                "client bytes/lock",
                "client peak bytes/lock",
                "server requests/period",
                "client round trips/period",
                "client CPU ms/s",
                "lost",
            ],
            &rows
        )
    ))
}
