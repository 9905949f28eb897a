//! Scenario 2, contention sweep: 1..64 clients, each its own connection, on one lock.

use std::time::Duration;

use crate::BenchResult;
use crate::contend::{Outcome, Run, contend};
use crate::peers::curator::Curator;
use crate::record::Record;
use crate::scenarios::latency::curator_system;
use crate::scenarios::{Ctx, Kind, ROLE_LIBRARY, clients, fresh_name};
use crate::servers::host_port;
use crate::stats::summarize;

/// The scenario id.
pub const ID: &str = "contention";

/// The client counts of the sweep.
pub fn counts(quick: bool) -> Vec<usize> {
    if quick {
        vec![1, 8, 32]
    } else {
        vec![1, 2, 4, 8, 16, 32, 64]
    }
}

/// Runs every system (of `--backends`) at every client count.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a system that fails is noted as skipped.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let seconds = ctx.pick(0.5, 2.0);
    for kind in ctx.kinds().into_iter().filter(|kind| kind.contends()) {
        for &count in &counts(ctx.quick) {
            match measure(ctx, kind, count, seconds).await {
                Ok(outcome) => ctx.push(
                    record(&kind.system(), kind.backend(), count, &outcome)
                        .with("role", kind.role()),
                ),
                Err(error) => {
                    ctx.skip(format!("{ID}: {} x{count}: {error}", kind.system()));
                    break;
                }
            }
        }
    }
    // Curator runs on ZooKeeper: left out with the other ZooKeeper systems.
    if !ctx.wants("zookeeper") {
        return Ok(());
    }
    match curator(ctx, seconds) {
        Ok(results) => {
            for (count, outcome) in results {
                ctx.push(
                    record(&curator_system(), "zookeeper", count, &outcome)
                        .with("role", ROLE_LIBRARY),
                );
            }
        }
        Err(error) => ctx.skip(format!("{ID}: Curator: {error}")),
    }
    Ok(())
}

async fn measure(ctx: &Ctx, kind: Kind, count: usize, seconds: f64) -> BenchResult<Outcome> {
    let name = fresh_name(ID);
    let opened = clients(kind, &ctx.servers, &name, count).await?;
    let run = Run {
        duration: Duration::from_secs_f64(seconds),
        hold: Duration::ZERO,
    };
    contend(opened, run).await
}

fn curator(ctx: &Ctx, seconds: f64) -> BenchResult<Vec<(usize, Outcome)>> {
    let program = Curator::compile()?;
    let (host, port) = host_port(&ctx.servers.zookeeper).ok_or("no ZooKeeper port")?;
    let path = format!("/curator-bench/{}", fresh_name(ID).replace('/', "-"));
    program.run(
        &format!("{host}:{port}"),
        &path,
        seconds,
        &counts(ctx.quick),
    )
}

/// The contention record: p50/p99/max are acquire waits.
pub fn record(system: &str, backend: &str, clients: usize, outcome: &Outcome) -> Record {
    let summary = summarize(&outcome.samples, clients, outcome.seconds);
    let mut record = Record::new(ID, system, backend).summary(clients, &summary, summary.wait);
    record.overlaps = outcome.overlaps;
    record
}
