//! Section 8: semaphores and read-write locks.

use std::path::Path;

use crate::BenchResult;
use crate::chart;
use crate::record::Record;

use super::sections::label;
use super::{ms, num, of, table};

/// The section: a bar chart per contended run, and every run in a table.
///
/// # Errors
///
/// A chart could not be drawn.
pub(super) fn shared(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "shared");
    let mix = |r: &Record| r.text("mix").unwrap_or("?").to_owned();
    let bars = |prefix: &str| -> Vec<(String, f64)> {
        runs.iter()
            .filter(|r| r.clients > 1 && mix(r).starts_with(prefix))
            .map(|r| (label(r), r.ops_per_s))
            .collect()
    };
    chart::bars(
        &out.join("shared_semaphore.svg"),
        "Semaphore, 32 clients on 5 permits: holds/s (log)",
        "holds/s",
        &bars("permits"),
        true,
    )?;
    chart::bars(
        &out.join("shared_rw.svg"),
        "Read-write lock, 32 clients, 90 % reads: holds/s (log)",
        "holds/s",
        &bars("rw"),
        true,
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.system.clone(),
                r.backend.clone(),
                mix(r),
                r.clients.to_string(),
                num(r.ops_per_s),
                ms(r.p50_us),
                ms(r.p99_us),
                r.overlaps.to_string(),
            ]
        })
        .collect();
    Ok(format!(
        "## 8. Semaphores and read-write locks\n\nEach client takes a hold, yields once inside \
         it, and releases, in a loop: one client alone, 32 clients on a 5-permit semaphore \
         (`permits:5`), and 32 clients of a read-write lock taking a write hold 10 % of the \
         time (`rw:10`). Every hold passes an occupancy check: a sixth permit holder, or anyone \
         beside a writer, is a violation. Peers: Curator's InterProcessSemaphoreV2 and \
         InterProcessReadWriteLock (own sessions per client), and on Redis the hand-written \
         sorted-set semaphore (no fencing, no renewal, no queue; polled every millisecond while \
         full).\n\n![semaphore](shared_semaphore.svg)\n\n![read-write](shared_rw.svg)\n\n{}\n",
        table(
            &[
                "system",
                "backend",
                "mix",
                "clients",
                "holds/s",
                "wait p50 ms",
                "wait p99 ms",
                "violations"
            ],
            &rows
        )
    ))
}
