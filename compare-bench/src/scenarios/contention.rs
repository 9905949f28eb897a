//! Scenario 2, contention sweep: 1..64 clients, each its own connection, on one lock.

use std::time::Duration;

use crate::BenchResult;
use crate::contend::{Outcome, Run, contend_warmed};
use crate::record::Record;
use crate::scenarios::latency::{curator_round, curator_system};
use crate::scenarios::{Ctx, Kind, ROLE_LIBRARY, clients, fresh_name};
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

/// How many rounds a full run splits each point's time into.
pub const ROUNDS: usize = 4;

/// How long each round's clients contend before its window opens: their connections, the
/// first queue and the servers' caches settle outside the timed window.
pub const WARMUP: Duration = Duration::from_millis(250);

/// Runs every system (of `--backends`) at every client count. A full run splits each point's
/// time into rounds that take turns across the systems and counts, as the latency scenario
/// does, so a noisy moment on a shared machine is spread over all of them instead of landing
/// on one system's point: each point merges its rounds' grants.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a system that fails is noted as skipped, and keeps the points it measured.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let (seconds, rounds) = (ctx.pick(0.5, 2.0), ctx.pick(1, ROUNDS));
    let per_round = seconds / rounds as f64;
    let counts = counts(ctx.quick);
    let kinds: Vec<Kind> = ctx
        .kinds()
        .into_iter()
        .filter(|kind| kind.contends())
        .collect();
    // Curator runs on ZooKeeper: left out with the other ZooKeeper systems. Its sweep is the
    // last row.
    let with_curator = ctx.wants("zookeeper");
    let mut curator = None;
    let mut sweeps: Vec<Sweep> = (0..=kinds.len())
        .map(|_| Sweep::new(counts.len()))
        .collect();
    for _ in 0..rounds {
        for (point, &count) in counts.iter().enumerate() {
            for (index, kind) in kinds.iter().enumerate() {
                let sweep = &mut sweeps[index];
                if sweep.failed.is_some() {
                    continue;
                }
                match measure(ctx, *kind, count, per_round).await {
                    Ok(outcome) => Outcome::merge(&mut sweep.points[point], outcome),
                    Err(error) => sweep.failed = Some(format!("x{count}: {error}")),
                }
            }
        }
        let sweep = &mut sweeps[kinds.len()];
        if with_curator && sweep.failed.is_none() {
            match curator_round(
                ctx,
                &mut curator,
                ID,
                (WARMUP.as_secs_f64(), per_round, &counts),
            ) {
                Ok(results) => {
                    for (count, outcome) in results {
                        if let Some(point) = counts.iter().position(|&c| c == count) {
                            Outcome::merge(&mut sweep.points[point], outcome);
                        }
                    }
                }
                Err(error) => sweep.failed = Some(error.to_string()),
            }
        }
    }
    let systems = kinds
        .iter()
        .map(|kind| (kind.system(), kind.backend(), kind.role()))
        .chain([(curator_system(), "zookeeper", ROLE_LIBRARY)]);
    for ((system, backend, role), sweep) in systems.zip(sweeps) {
        if let Some(error) = sweep.failed {
            ctx.skip(format!("{ID}: {system}: {error}"));
        }
        for (&count, outcome) in counts.iter().zip(sweep.points) {
            if let Some(outcome) = outcome {
                ctx.push(record(&system, backend, count, &outcome).with("role", role));
            }
        }
    }
    Ok(())
}

/// One system's sweep: its merged outcome at each count, and why it stopped, if it did.
struct Sweep {
    points: Vec<Option<Outcome>>,
    failed: Option<String>,
}

impl Sweep {
    fn new(points: usize) -> Self {
        Self {
            points: (0..points).map(|_| None).collect(),
            failed: None,
        }
    }
}

async fn measure(ctx: &Ctx, kind: Kind, count: usize, seconds: f64) -> BenchResult<Outcome> {
    let name = fresh_name(ID);
    let opened = clients(kind, &ctx.servers, &name, count).await?;
    let run = Run {
        duration: Duration::from_secs_f64(seconds),
        hold: Duration::ZERO,
    };
    contend_warmed(opened, WARMUP, run).await
}

/// The contention record: p50/p99/max are acquire waits.
pub fn record(system: &str, backend: &str, clients: usize, outcome: &Outcome) -> Record {
    let summary = summarize(&outcome.samples, clients, outcome.seconds);
    let mut record = Record::new(ID, system, backend).summary(clients, &summary, summary.wait);
    record.overlaps = outcome.overlaps;
    record
}
