//! The contention driver: clients take one lock in a loop, each critical section passes through
//! the overlap detector, every grant becomes a [`Sample`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lock_core::{AcquireOptions, DistributedLock, DistributedLockExt, LockGuard, LockName};

use crate::BenchResult;
use crate::stats::Sample;
use lock_testkit::OverlapDetector;

/// One client of one lock: its own connection or session, as a separate process would have.
#[async_trait]
pub trait Contender: Send + Sync {
    /// Waits until the lock is ours.
    async fn acquire(&self) -> BenchResult<Box<dyn Held>>;
}

/// A hold of a [`Contender`]'s lock.
#[async_trait]
pub trait Held: Send {
    /// Gives the lock back.
    async fn release(self: Box<Self>) -> BenchResult<()>;

    /// Whether nobody may hold beside it (a mutex or a write hold); a permit or a read hold
    /// shares.
    fn exclusive(&self) -> bool {
        true
    }
}

/// How a contended run goes.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Clients stop asking after this long.
    pub duration: Duration,
    /// Time spent inside the critical section (zero: one scheduler yield).
    pub hold: Duration,
}

/// What a run produced.
#[derive(Debug)]
pub struct Outcome {
    /// Every grant.
    pub samples: Vec<Sample>,
    /// Wall time until the last client finished.
    pub seconds: f64,
    /// Overlaps the detector counted.
    pub overlaps: u64,
}

impl Outcome {
    /// Adds a round's outcome to the rounds before it (`into` is `None` before the first):
    /// the grants of every round, their summed time and overlaps.
    pub fn merge(into: &mut Option<Self>, round: Self) {
        match into {
            None => *into = Some(round),
            Some(total) => {
                total.samples.extend(round.samples);
                total.seconds += round.seconds;
                total.overlaps += round.overlaps;
            }
        }
    }
}

/// Runs `clients` against each other until `run.duration` has passed. Only grants made within
/// that window count, and the run lasts until the last of them is released: a client still
/// waiting at the deadline finishes its turn uncounted, so neither a barging lock's retry sleep
/// nor a queue's drain after the deadline lands in one system's time and not another's.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// The first client error (the run stops counting it).
pub async fn contend(clients: Vec<Arc<dyn Contender>>, run: Run) -> BenchResult<Outcome> {
    contend_warmed(clients, Duration::ZERO, run).await
}

/// As [`contend`], with the clients running `warmup` before the window opens: grants before it
/// are not counted, so opening a client's connections and forming the first queue fall outside
/// the timed window.
///
/// # Cancel safety
///
/// As [`contend`].
///
/// # Errors
///
/// As [`contend`].
pub async fn contend_warmed(
    clients: Vec<Arc<dyn Contender>>,
    warmup: Duration,
    run: Run,
) -> BenchResult<Outcome> {
    let detector = Arc::new(OverlapDetector::new());
    let started = Instant::now() + warmup;
    let deadline = started + run.duration;
    let mut tasks = Vec::new();
    for (id, client) in clients.into_iter().enumerate() {
        let detector = Arc::clone(&detector);
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut last_release = deadline;
            while Instant::now() < deadline {
                let asked = Instant::now();
                let held = client.acquire().await?;
                let granted = Instant::now();
                let entry = detector.enter(id, 0);
                if run.hold.is_zero() {
                    tokio::task::yield_now().await;
                } else {
                    tokio::time::sleep(run.hold).await;
                }
                detector.leave();
                held.release().await?;
                if granted > deadline {
                    break;
                }
                if granted < started {
                    continue;
                }
                last_release = last_release.max(Instant::now());
                samples.push(Sample {
                    client: id,
                    wait: granted - asked,
                    pair: asked.elapsed(),
                    previous: entry.previous,
                    gap: entry.gap,
                });
            }
            Ok::<_, crate::BenchError>((samples, last_release))
        }));
    }
    let (mut samples, mut ended) = (Vec::new(), deadline);
    for task in tasks {
        let (client_samples, last_release) = task.await??;
        samples.extend(client_samples);
        ended = ended.max(last_release);
    }
    Ok(Outcome {
        samples,
        seconds: (ended - started).as_secs_f64(),
        overlaps: detector.overlaps(),
    })
}

/// A distlock client of one lock name.
#[derive(Debug)]
pub struct DistlockContender {
    lock: Arc<dyn DistributedLock>,
    name: LockName,
    options: AcquireOptions,
}

impl DistlockContender {
    /// `lock`'s lock `name`, acquired with default options (wait forever, 30 s renewed lease).
    pub fn new(lock: Arc<dyn DistributedLock>, name: &LockName) -> Self {
        Self {
            lock,
            name: name.clone(),
            options: AcquireOptions::default(),
        }
    }
}

struct GuardHeld(LockGuard);

#[async_trait]
impl Contender for DistlockContender {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let guard = self
            .lock
            .acquire_timeout_with(&self.name, &self.options)
            .await?;
        Ok(Box::new(GuardHeld(guard)))
    }
}

#[async_trait]
impl Held for GuardHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        Ok(self.0.release().await?)
    }
}
