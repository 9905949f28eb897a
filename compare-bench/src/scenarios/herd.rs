//! Scenario 4, herd effect: the "non-scalable" ZooKeeper lock (every waiter watches the parent's
//! children) against lock-zk's predecessor watch, at 8, 32 and 128 waiters.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lock_core::LockName;
use lock_zk::ZkLock;

use crate::BenchResult;
use crate::contend::{Contender, DistlockContender, Outcome, Run, contend};
use crate::counters::zk_packets;
use crate::peers::zk_herd::HerdLock;
use crate::record::Record;
use crate::scenarios::{Ctx, fresh_name};
use crate::servers::host_port;
use crate::stats::summarize;

/// The scenario id.
pub const ID: &str = "herd";

/// The foil's `system` label.
pub const FOIL: &str = "herd foil: all waiters watch the parent";

/// Runs both recipes at each waiter count.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a point that fails is noted as skipped.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let counts: Vec<usize> = ctx.pick(vec![8, 32], vec![8, 32, 128]);
    let seconds = ctx.pick(1.0, 3.0);
    for waiters in counts {
        for foil in [true, false] {
            match measure(ctx, waiters, seconds, foil).await {
                Ok(record) => ctx.push(record),
                Err(error) => ctx.skip(format!("{ID}: foil={foil} x{waiters}: {error}")),
            }
        }
    }
    Ok(())
}

async fn measure(ctx: &Ctx, waiters: usize, seconds: f64, foil: bool) -> BenchResult<Record> {
    let url = ctx.servers.zookeeper.clone();
    let name = fresh_name(ID);
    let wakeups = Arc::new(AtomicU64::new(0));
    let mut opened: Vec<Arc<dyn Contender>> = Vec::new();
    let mut zk_locks = Vec::new();
    // One holder plus `waiters` waiting behind it.
    for _ in 0..=waiters {
        if foil {
            let (host, port) = host_port(&url).ok_or("no ZooKeeper port")?;
            let parent = format!("/herd-foil/{}", name.replace('/', "-"));
            let lock =
                HerdLock::connect(&format!("{host}:{port}"), &parent, Arc::clone(&wakeups)).await?;
            opened.push(Arc::new(lock));
        } else {
            let lock = Arc::new(ZkLock::builder(&url).connect().await?);
            zk_locks.push(Arc::clone(&lock));
            opened.push(Arc::new(DistlockContender::new(
                lock,
                &LockName::new(&name)?,
            )));
        }
    }
    let before = zk_packets(&url)?;
    let run = Run {
        duration: Duration::from_secs_f64(seconds),
        hold: Duration::from_millis(1),
    };
    let outcome: Outcome = contend(opened, run).await?;
    let packets = zk_packets(&url)?.saturating_sub(before);
    let woken = if foil {
        wakeups.load(Ordering::Relaxed)
    } else {
        zk_locks.iter().map(|lock| lock.predecessor_wakeups()).sum()
    };
    let summary = summarize(&outcome.samples, waiters + 1, outcome.seconds);
    let releases = summary.ops.max(1) as f64;
    let system = if foil {
        FOIL.to_owned()
    } else {
        format!("distlock {} (predecessor watch)", env!("CARGO_PKG_VERSION"))
    };
    let mut record =
        Record::new(ID, &system, "zookeeper").summary(waiters, &summary, summary.handoff);
    record.overlaps = outcome.overlaps;
    Ok(record
        .with(
            "wakeups_per_release",
            (woken as f64 / releases * 100.0).round() / 100.0,
        )
        .with(
            "packets_per_release",
            (packets as f64 / releases * 100.0).round() / 100.0,
        )
        .with("latency_is", "handoff: release to next grant"))
}
