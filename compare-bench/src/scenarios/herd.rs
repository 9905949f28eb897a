//! Scenario 4, herd effect: the "non-scalable" ZooKeeper lock (every waiter watches the parent's
//! children) against lock-zk's predecessor watch, at 8, 32 and 128 waiters.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;

use lock_core::LockName;
use lock_zk::ZkLock;

use crate::BenchResult;
use crate::contend::{Contender, DistlockContender, Held, Outcome, Run, contend};
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
            match measure(&ctx.servers.zookeeper, waiters, seconds, foil).await {
                Ok(record) => ctx.push(record),
                Err(error) => ctx.skip(format!("{ID}: foil={foil} x{waiters}: {error}")),
            }
        }
    }
    Ok(())
}

/// One point: a holder and `waiters` waiting on the ZooKeeper at `url`, taking the lock in turn
/// for `seconds`, by the foil or by lock-zk. Wake-ups and packets are counted over the whole run,
/// the drain after the window included, so they are divided by every release of the run.
///
/// # Cancel safety
///
/// As [`run`].
///
/// # Errors
///
/// A client that cannot connect, or the first error of the run.
pub async fn measure(url: &str, waiters: usize, seconds: f64, foil: bool) -> BenchResult<Record> {
    let name = fresh_name(ID);
    let wakeups = Arc::new(AtomicU64::new(0));
    let releases = Arc::new(AtomicU64::new(0));
    let mut opened: Vec<Arc<dyn Contender>> = Vec::new();
    let mut zk_locks = Vec::new();
    // One holder plus `waiters` waiting behind it.
    for _ in 0..=waiters {
        if foil {
            let (host, port) = host_port(url).ok_or("no ZooKeeper port")?;
            let parent = format!("/herd-foil/{}", name.replace('/', "-"));
            let lock =
                HerdLock::connect(&format!("{host}:{port}"), &parent, Arc::clone(&wakeups)).await?;
            opened.push(Tallied::counting(Arc::new(lock), &releases));
        } else {
            let lock = Arc::new(ZkLock::builder(url).connect().await?);
            zk_locks.push(Arc::clone(&lock));
            let contender = DistlockContender::new(lock, &LockName::new(&name)?);
            opened.push(Tallied::counting(Arc::new(contender), &releases));
        }
    }
    let before = zk_packets(url)?;
    let run = Run {
        duration: Duration::from_secs_f64(seconds),
        hold: Duration::from_millis(1),
    };
    let outcome: Outcome = contend(opened, run).await?;
    let packets = zk_packets(url)?.saturating_sub(before);
    let woken = if foil {
        wakeups.load(Ordering::Relaxed)
    } else {
        zk_locks.iter().map(|lock| lock.predecessor_wakeups()).sum()
    };
    let summary = summarize(&outcome.samples, waiters + 1, outcome.seconds);
    let releases = releases.load(Ordering::Relaxed).max(1) as f64;
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

/// A client that counts its releases into a tally shared by the run's clients: every release,
/// the window's and the drain's alike.
struct Tallied {
    client: Arc<dyn Contender>,
    releases: Arc<AtomicU64>,
}

impl Tallied {
    fn counting(client: Arc<dyn Contender>, releases: &Arc<AtomicU64>) -> Arc<dyn Contender> {
        let releases = Arc::clone(releases);
        Arc::new(Self { client, releases })
    }
}

#[async_trait]
impl Contender for Tallied {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let held = self.client.acquire().await?;
        Ok(Box::new(TalliedHeld {
            held,
            releases: Arc::clone(&self.releases),
        }))
    }
}

struct TalliedHeld {
    held: Box<dyn Held>,
    releases: Arc<AtomicU64>,
}

#[async_trait]
impl Held for TalliedHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        self.held.release().await?;
        self.releases.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}
