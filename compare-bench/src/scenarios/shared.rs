//! Scenario 8, shared holds: semaphore and read-write lock throughput on every backend that
//! has them (one client alone; 32 clients on 5 permits; 32 clients with 90 % reads), beside
//! Curator's InterProcessSemaphoreV2 and InterProcessReadWriteLock and, on Redis, the
//! hand-written sorted-set semaphore. Every hold passes an occupancy check: a sixth permit
//! holder or a writer with company counts as a violation.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lock_core::{AcquireOptions, Claim, DistributedLock, DistributedLockExt, LockGuard, LockName};
use lock_lab::claimants::ClaimMix;
use lock_testkit::Occupancy;

use crate::BenchResult;
use crate::contend::{Contender, Held, Outcome};
use crate::peers::curator::Curator;
use crate::peers::redis_zset::ZsetSemaphore;
use crate::record::Record;
use crate::scenarios::latency::curator_recipe;
use crate::scenarios::{BACKENDS, Ctx, Kind, distlock_url, fresh_name};
use crate::servers::host_port;
use crate::stats::{Sample, summarize};

/// The scenario id.
pub const ID: &str = "shared";
/// Permits of the semaphore.
pub const PERMITS: u32 = 5;
/// Clients of the contended runs.
pub const CLIENTS: usize = 32;
/// The hand-written semaphore's poll interval.
const ZSET_POLL: Duration = Duration::from_millis(1);

/// The runs per system: the semaphore alone, the semaphore contended, the read-write mix.
const RUNS: [(ClaimMix, usize); 3] = [
    (ClaimMix::Permits(PERMITS), 1),
    (ClaimMix::Permits(PERMITS), CLIENTS),
    (ClaimMix::ReadWrite { write_percent: 10 }, CLIENTS),
];

/// Runs every system.
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
    for backend in BACKENDS {
        for (mix, clients) in RUNS {
            match distlock(ctx, backend, (mix, clients), seconds).await {
                Ok(outcome) => {
                    let system = Kind::Distlock(backend).system();
                    ctx.push(record(&system, backend, (mix, clients), &outcome));
                }
                Err(error) => ctx.skip(format!("{ID}: distlock {backend} {}: {error}", mix.spec())),
            }
        }
    }
    for clients in [1, CLIENTS] {
        let mix = ClaimMix::Permits(PERMITS);
        match zset(ctx, clients, seconds).await {
            Ok(outcome) => {
                let system = format!("ZSET semaphore, {} ms poll", ZSET_POLL.as_millis());
                ctx.push(record(&system, "redis", (mix, clients), &outcome));
            }
            Err(error) => ctx.skip(format!("{ID}: ZSET semaphore x{clients}: {error}")),
        }
    }
    match curator(ctx, seconds) {
        Ok(outcomes) => {
            for (run, outcome) in outcomes {
                let recipe = match run.0 {
                    ClaimMix::Permits(_) => "InterProcessSemaphoreV2",
                    ClaimMix::ReadWrite { .. } => "InterProcessReadWriteLock",
                };
                ctx.push(record(&curator_recipe(recipe), "zookeeper", run, &outcome));
            }
        }
        Err(error) => ctx.skip(format!("{ID}: Curator: {error}")),
    }
    Ok(())
}

async fn distlock(
    ctx: &Ctx,
    backend: &str,
    (mix, clients): (ClaimMix, usize),
    seconds: f64,
) -> BenchResult<Outcome> {
    let name = LockName::new(fresh_name(ID))?;
    let mut opened: Vec<Arc<dyn Contender>> = Vec::with_capacity(clients);
    for _ in 0..clients {
        let lock = distlock::connect(&distlock_url(&ctx.servers, backend)).await?;
        opened.push(Arc::new(ClaimContender::new(lock, &name, mix)));
    }
    shared_holds(opened, permit_limit(mix), Duration::from_secs_f64(seconds)).await
}

/// The most shared holders `mix` allows at once: the permits, or any number of readers.
pub fn permit_limit(mix: ClaimMix) -> Option<usize> {
    match mix {
        ClaimMix::Permits(permits) => Some(permits as usize),
        ClaimMix::ReadWrite { .. } => None,
    }
}

async fn zset(ctx: &Ctx, clients: usize, seconds: f64) -> BenchResult<Outcome> {
    let key = fresh_name(ID);
    let mut opened: Vec<Arc<dyn Contender>> = Vec::with_capacity(clients);
    for _ in 0..clients {
        let semaphore = ZsetSemaphore::connect(&ctx.servers.redis, &key, PERMITS, ZSET_POLL);
        opened.push(Arc::new(semaphore.await?));
    }
    let limit = Some(PERMITS as usize);
    shared_holds(opened, limit, Duration::from_secs_f64(seconds)).await
}

fn curator(ctx: &Ctx, seconds: f64) -> BenchResult<Vec<((ClaimMix, usize), Outcome)>> {
    let program = Curator::compile_program("CuratorShared")?;
    let (host, port) = host_port(&ctx.servers.zookeeper).ok_or("no ZooKeeper port")?;
    let hosts = format!("{host}:{port}");
    let mut outcomes = Vec::new();
    for (mix, clients) in RUNS {
        let path = format!("/curator-bench/{}", fresh_name(ID).replace('/', "-"));
        let mode = match mix {
            ClaimMix::Permits(_) => "semaphore",
            ClaimMix::ReadWrite { .. } => "rw",
        };
        let outcome = program.run_shared(&hosts, &path, seconds, (mode, clients))?;
        outcomes.push(((mix, clients), outcome));
    }
    Ok(outcomes)
}

/// The shared-hold record: p50/p99/max are acquire waits; `overlaps` are violations.
pub fn record(
    system: &str,
    backend: &str,
    (mix, clients): (ClaimMix, usize),
    outcome: &Outcome,
) -> Record {
    let summary = summarize(&outcome.samples, clients, outcome.seconds);
    let mut record = Record::new(ID, system, backend)
        .summary(clients, &summary, summary.wait)
        .with("mix", mix.spec());
    record.overlaps = outcome.overlaps;
    record
}

/// The shared-hold driver: clients take holds in a loop until `duration` has passed; each
/// hold yields once inside. The outcome's `overlaps` are violations: entries that make more
/// shared holders than `limit` (a semaphore's permits; readers have none), or that break a
/// writer's exclusivity.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it leaves the holds of its clients to their leases.
///
/// # Errors
///
/// The first client error.
pub async fn shared_holds(
    clients: Vec<Arc<dyn Contender>>,
    limit: Option<usize>,
    duration: Duration,
) -> BenchResult<Outcome> {
    let occupancy = Arc::new(Occupancy::new());
    let (inside, crowded) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicU64::new(0)));
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = Vec::new();
    for (id, client) in clients.into_iter().enumerate() {
        let (occupancy, inside, crowded) = (occupancy.clone(), inside.clone(), crowded.clone());
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            while Instant::now() < deadline {
                let asked = Instant::now();
                let held = client.acquire().await?;
                let granted = Instant::now();
                let exclusive = held.exclusive();
                if exclusive {
                    occupancy.enter_exclusive();
                } else {
                    occupancy.enter_shared();
                    let now_inside = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    if limit.is_some_and(|limit| now_inside > limit) {
                        crowded.fetch_add(1, Ordering::SeqCst);
                    }
                }
                tokio::task::yield_now().await;
                if exclusive {
                    occupancy.leave_exclusive();
                } else {
                    inside.fetch_sub(1, Ordering::SeqCst);
                    occupancy.leave_shared();
                }
                held.release().await?;
                let wait = granted - asked;
                let pair = asked.elapsed();
                samples.push(Sample {
                    client: id,
                    wait,
                    pair,
                    previous: None,
                    gap: None,
                });
            }
            Ok::<_, crate::BenchError>(samples)
        }));
    }
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await??);
    }
    Ok(Outcome {
        samples,
        seconds: started.elapsed().as_secs_f64(),
        overlaps: crowded.load(Ordering::SeqCst) + occupancy.exclusive_overlaps(),
    })
}

/// A distlock client taking permits or read-write holds of one name.
pub struct ClaimContender {
    lock: Arc<dyn DistributedLock>,
    name: LockName,
    mix: ClaimMix,
}

impl ClaimContender {
    /// `lock`'s holds of `name` by `mix`, acquired with default options.
    pub fn new(lock: Arc<dyn DistributedLock>, name: &LockName, mix: ClaimMix) -> Self {
        Self {
            lock,
            name: name.clone(),
            mix,
        }
    }
}

impl std::fmt::Debug for ClaimContender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaimContender")
            .field("name", &self.name)
            .field("mix", &self.mix)
            .finish_non_exhaustive()
    }
}

struct ClaimHeld {
    guard: LockGuard,
    exclusive: bool,
}

#[async_trait]
impl Contender for ClaimContender {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let claim = self.mix.draw();
        let options = AcquireOptions::default();
        let guard = self
            .lock
            .acquire_claim_timeout_with(&self.name, claim, &options)
            .await?;
        let exclusive = claim == Claim::Write;
        Ok(Box::new(ClaimHeld { guard, exclusive }))
    }
}

#[async_trait]
impl Held for ClaimHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        Ok(self.guard.release().await?)
    }

    fn exclusive(&self) -> bool {
        self.exclusive
    }
}
