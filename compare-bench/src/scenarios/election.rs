//! Scenario 9, leader failover: an election's leader (a `lock-holder lead` process) is killed
//! with SIGKILL while a candidate waits in another process; how long until the candidate leads,
//! and until an observer on a third connection sees it lead. Beside it, Curator's LeaderLatch:
//! a leader JVM killed, a follower JVM reporting when its latch leads.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lock_core::{DistributedLock, ElectionExt};

use crate::BenchResult;
use crate::holder::HolderProcess;
use crate::peers::curator::Curator;
use crate::record::Record;
use crate::scenarios::latency::curator_recipe;
use crate::scenarios::{Ctx, fresh_name, short_tick_zookeeper};
use crate::stats::Spread;

/// The scenario id.
pub const ID: &str = "election";

/// The lease of the lease backends and the session timeout of ZooKeeper (distlock's and
/// Curator's alike).
const LEASE: Duration = Duration::from_secs(2);

/// The longest a trial waits for the new leader.
const LIMIT: Duration = Duration::from_secs(60);

/// Runs the trials of every backend and of Curator.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a setting that fails is noted as skipped.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let trials = ctx.pick(2, 5);
    let (zk, zk_url) = short_tick_zookeeper(ctx)?;
    let ms = LEASE.as_millis();
    let mut settings = vec![(
        "zookeeper",
        format!("{zk_url}?session_timeout={ms}ms"),
        None,
    )];
    for backend in ["redis", "postgres", "mysql"] {
        if !ctx.wants(backend) {
            continue;
        }
        settings.push((backend, ctx.servers.url(backend), Some(LEASE)));
    }
    for (backend, url, lease) in settings {
        match measure(&url, lease, trials).await {
            Ok((seen, led)) => ctx.push(record(&ours(), backend, &seen, &led)),
            Err(error) => ctx.skip(format!("{ID}: distlock {backend}: {error}")),
        }
    }
    let hosts = zk_url.trim_start_matches("zk://").to_owned();
    match curator_trials(&hosts, trials) {
        Ok(led) => ctx.push(record(
            &curator_recipe("LeaderLatch"),
            "zookeeper",
            &led,
            &led,
        )),
        Err(error) => ctx.skip(format!("{ID}: Curator LeaderLatch: {error}")),
    }
    drop(zk);
    Ok(())
}

fn ours() -> String {
    format!("distlock {}", env!("CARGO_PKG_VERSION"))
}

/// The record: p50/p99/max from the kill to the new leader seen by an observer (Curator: by
/// the new leader itself, having no observer), and the same to the candidate's own grant.
fn record(system: &str, backend: &str, seen: &[Duration], led: &[Duration]) -> Record {
    let (spread, led_spread) = (Spread::of(seen.to_vec()), Spread::of(led.to_vec()));
    let mut record = Record::new(ID, system, backend);
    record.clients = 3;
    record.ops = seen.len() as u64;
    record.seconds = seen.iter().map(Duration::as_secs_f64).sum();
    record.p50_us = spread.p50_us;
    record.p99_us = spread.p99_us;
    record.max_us = spread.max_us;
    record
        .with(
            "setting_ms",
            u64::try_from(LEASE.as_millis()).unwrap_or(u64::MAX),
        )
        .with("led_p50_us", led_spread.p50_us)
        .with("led_max_us", led_spread.max_us)
        .with(
            "latency_is",
            "SIGKILL of the leader to the new leader seen by an observer",
        )
}

/// Kill-to-seen and kill-to-led times of `trials` leader kills on `url`.
async fn measure(
    url: &str,
    lease: Option<Duration>,
    trials: usize,
) -> BenchResult<(Vec<Duration>, Vec<Duration>)> {
    let (mut seen, mut led) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        let name = fresh_name(ID);
        let mut leader = HolderProcess::lead(url, &name, lease, Duration::from_secs(30))?;
        let candidate = distlock::connect(url).await?;
        let observer = distlock::connect(url).await?;
        let observing = tokio::spawn(seen_leading(observer, name.clone(), "follower"));
        // The new leader leads on until the observer has seen it, then resigns.
        let campaigning = tokio::spawn(async move {
            let leading = candidate.campaign(name.as_str(), "follower").await?;
            Ok::<_, lock_core::Error>((Instant::now(), leading))
        });
        // The candidate queues behind the live leader, the observer sees the leader first.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let killed = Instant::now();
        leader.kill();
        let (led_at, leading) = tokio::time::timeout(LIMIT, campaigning).await???;
        let seen_at = tokio::time::timeout(LIMIT, observing).await???;
        leading.resign().await?;
        led.push(led_at.saturating_duration_since(killed));
        seen.push(seen_at.saturating_duration_since(killed));
    }
    Ok((seen, led))
}

/// When an observer of `name` first sees `value` lead.
async fn seen_leading(
    lock: Arc<dyn DistributedLock>,
    name: String,
    value: &'static str,
) -> lock_core::Result<Instant> {
    let mut observer = lock.observe(name.as_str())?;
    loop {
        let change = observer.next_change().await?;
        if change.leader.is_some_and(|leader| leader.value == value) {
            return Ok(Instant::now());
        }
    }
}

/// Kill-to-led times of `trials` Curator leader kills.
fn curator_trials(hosts: &str, trials: usize) -> BenchResult<Vec<Duration>> {
    let curator = Curator::compile_program("CuratorElection")?;
    let session = LEASE.as_millis().to_string();
    let mut led = Vec::new();
    for _ in 0..trials {
        let path = format!("/compare-bench/{}", fresh_name(ID));
        let (mut leader, mut leader_lines) = spawn(&curator, &["lead", hosts, &path, &session])?;
        expect(&mut leader_lines, "leading")?;
        let (mut follower, mut lines) = spawn(&curator, &["follow", hosts, &path, &session])?;
        expect(&mut lines, "started")?;
        // The follower's latch node is made in the background after "started".
        std::thread::sleep(Duration::from_millis(500));
        let killed = wall_micros();
        let _ = leader.kill();
        let _ = leader.wait();
        let line = lines.next().ok_or("the Curator follower never led")??;
        let at: u64 = line
            .strip_prefix("leading ")
            .and_then(|micros| micros.parse().ok())
            .ok_or_else(|| format!("unexpected line from the Curator follower: {line:?}"))?;
        led.push(Duration::from_micros(at.saturating_sub(killed)));
        let _ = follower.wait();
    }
    Ok(led)
}

type Lines = std::io::Lines<BufReader<std::process::ChildStdout>>;

fn spawn(curator: &Curator, args: &[&str]) -> BenchResult<(Child, Lines)> {
    let mut child = curator.command(args).stdout(Stdio::piped()).spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or("the Curator program has no stdout")?;
    Ok((child, BufReader::new(stdout).lines()))
}

fn expect(lines: &mut Lines, expected: &str) -> BenchResult<()> {
    match lines.next() {
        Some(Ok(line)) if line == expected => Ok(()),
        other => Err(format!("the Curator program said {other:?}, not {expected:?}").into()),
    }
}

/// Wall-clock microseconds, comparable with the JVM's on this machine.
fn wall_micros() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
}
