//! Scenario 1, latency: one client, no contention, acquire+release pairs back to back.

use std::time::Duration;

use crate::BenchResult;
use crate::contend::{Outcome, Run, contend};
use crate::cpu_use::CpuUse;
use crate::peers::curator::Curator;
use crate::peers::curator_session::CuratorSession;
use crate::record::Record;
use crate::scenarios::latency_turns::{Turn, turns};
use crate::scenarios::{Ctx, Kind, ROLE_LIBRARY, client, fresh_name};
use crate::servers::host_port;
use crate::stats::summarize;

/// The scenario id.
pub const ID: &str = "latency";

/// Untimed warm-up before each timed run: connections, prepared statements and scripts cached,
/// and the server's JIT warm for ZooKeeper (Curator's program warms up with 300 pairs too).
const WARMUP: Duration = Duration::from_millis(700);

/// The field of a latency record with each round's pairs/s, in the order of the rounds.
pub const ROUND_RATES: &str = "round_pairs_per_s";

/// Runs every system (of `--backends`) for the run's latency duration, split into rounds that
/// take turns across the systems, so a noisy moment on a shared machine is spread over all of
/// them instead of landing on one. Each backend's systems take their turns side by side and
/// every other round runs backwards (see the `latency_turns` module). Each record keeps its
/// rounds' pairs/s too ([`ROUND_RATES`]), so a ratio's spread over the rounds can be read
/// beside it.
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
    let (seconds, rounds) = (ctx.pick(0.5, 8.0), ctx.pick(1, 8));
    let per_round = seconds / rounds as f64;
    let kinds: Vec<Kind> = ctx
        .kinds()
        .into_iter()
        .filter(|kind| kind.uncontended())
        .collect();
    // Curator runs on ZooKeeper: left out with the other ZooKeeper systems.
    let with_curator = ctx.wants("zookeeper");
    let mut curator = None;
    let mut merged: Vec<Option<Outcome>> = (0..=kinds.len()).map(|_| None).collect();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); kinds.len() + 1];
    let mut used: Vec<Option<CpuUse>> = vec![None; kinds.len()];
    let mut failed: Vec<Option<String>> = vec![None; kinds.len() + 1];
    let backends: Vec<&str> = kinds.iter().map(|kind| kind.backend()).collect();
    for round in 0..rounds {
        for turn in turns(&backends, with_curator, round) {
            let index = match turn {
                Turn::System(index) => index,
                Turn::Curator => kinds.len(),
            };
            if failed[index].is_some() {
                continue;
            }
            let outcome = match turn {
                Turn::System(index) => {
                    measure(ctx, kinds[index], per_round)
                        .await
                        .map(|(outcome, cpu)| {
                            CpuUse::merge(&mut used[index], cpu);
                            outcome
                        })
                }
                Turn::Curator => {
                    let ran = curator_round(ctx, &mut curator, ID, (0.0, per_round, &[1]));
                    ran.and_then(|mut outcomes| {
                        let last = outcomes.pop().map(|(_, outcome)| outcome);
                        last.ok_or_else(|| "Curator printed no result".into())
                    })
                }
            };
            match outcome {
                Ok(outcome) => {
                    rates[index].push(round_rate(&outcome));
                    Outcome::merge(&mut merged[index], outcome);
                }
                Err(error) => failed[index] = Some(error.to_string()),
            }
        }
    }
    let systems = kinds
        .iter()
        .map(|kind| (kind.system(), kind.backend(), kind.role()))
        .chain([(curator_system(), "zookeeper", ROLE_LIBRARY)]);
    for ((index, (system, backend, role)), outcome) in systems.enumerate().zip(merged) {
        match (&failed[index], outcome) {
            (Some(error), _) => ctx.skip(format!("{ID}: {system}: {error}")),
            (None, Some(outcome)) => {
                let record = record(&system, backend, &outcome)
                    .with("role", role)
                    .with(ROUND_RATES, std::mem::take(&mut rates[index]));
                // Curator's client is a JVM of its own, started by its first round: unread.
                match used.get(index).copied().flatten() {
                    Some(cpu) => ctx.push(cpu.per_pair(record, outcome.samples.len())),
                    None => ctx.push(record),
                }
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// A round's pairs per second.
fn round_rate(outcome: &Outcome) -> f64 {
    let rate = outcome.samples.len() as f64 / outcome.seconds.max(f64::MIN_POSITIVE);
    (rate * 10.0).round() / 10.0
}

/// One round of `kind`: its outcome, and the CPU time its client and server used in it.
async fn measure(ctx: &Ctx, kind: Kind, seconds: f64) -> BenchResult<(Outcome, CpuUse)> {
    let name = fresh_name(ID);
    let lock = client(kind, &ctx.servers, &name).await?;
    let warm_until = std::time::Instant::now() + WARMUP;
    while std::time::Instant::now() < warm_until {
        lock.acquire().await?.release().await?;
    }
    let run = Run {
        duration: Duration::from_secs_f64(seconds),
        hold: Duration::ZERO,
    };
    let server = ctx.servers.server_pid(kind.backend());
    let before = CpuUse::now(server);
    let outcome = contend(vec![lock], run).await?;
    Ok((outcome, CpuUse::now(server).since(before)))
}

/// One round of Curator's loop at each of `counts`, uncounted for `warmup` seconds and then for
/// `seconds`, in `session`: the program
/// of the scenario `scenario`, started by its first round and kept for the next ones.
///
/// # Errors
///
/// As [`Curator::compile`], [`Curator::session`] and [`CuratorSession::run`].
pub fn curator_round(
    ctx: &Ctx,
    session: &mut Option<CuratorSession>,
    scenario: &str,
    (warmup, seconds, counts): (f64, f64, &[usize]),
) -> BenchResult<Vec<(usize, Outcome)>> {
    let running = match session {
        Some(running) => running,
        None => {
            let program = Curator::compile()?;
            let (host, port) = host_port(&ctx.servers.zookeeper).ok_or("no ZooKeeper port")?;
            let path = format!("/curator-bench/{}", fresh_name(scenario).replace('/', "-"));
            session.insert(program.session(&format!("{host}:{port}"), &path)?)
        }
    };
    running.run((warmup, seconds), counts)
}

/// Curator's `system` label.
pub fn curator_system() -> String {
    curator_recipe("InterProcessMutex")
}

/// The `system` label of Curator's `recipe`, with the installed version.
pub fn curator_recipe(recipe: &str) -> String {
    let version = crate::machine::package_version("libcurator-recipes-java");
    format!(
        "Curator {recipe} {}",
        version.split('-').next().unwrap_or(&version)
    )
}

/// The latency record: p50/p99/max are acquire+release pair times.
pub fn record(system: &str, backend: &str, outcome: &Outcome) -> Record {
    let summary = summarize(&outcome.samples, 1, outcome.seconds);
    let mut record = Record::new(ID, system, backend).summary(1, &summary, summary.pair);
    record.overlaps = outcome.overlaps;
    record
}
