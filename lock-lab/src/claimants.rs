//! Shared holds across processes: `lock-holder claims` runs tasks that take permits or read and
//! write holds of one name and print each hold's wall-clock interval, taken from inside it;
//! tests merge the intervals of every process (see [`lock_testkit::intervals`]).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use distlock::{Claim, DistributedLock, DistributedLockExt};
use lock_testkit::intervals::{HoldInterval, wall_micros};

/// What the tasks of a claimant take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimMix {
    /// A permit of a semaphore with this many.
    Permits(u32),
    /// A read hold, or a write hold this percentage of the time.
    ReadWrite {
        /// How often, in percent, a hold is a write hold.
        write_percent: u32,
    },
}

impl ClaimMix {
    /// `permits:N` or `rw:P` (P % writes), as `lock-holder claims` takes it.
    ///
    /// # Errors
    ///
    /// A message when `spec` is neither.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let bad = || format!("not a claim mix (permits:N or rw:PERCENT): {spec:?}");
        match spec.split_once(':') {
            Some(("permits", n)) => Ok(Self::Permits(n.parse().map_err(|_| bad())?)),
            Some(("rw", p)) => Ok(Self::ReadWrite {
                write_percent: p.parse().map_err(|_| bad())?,
            }),
            _ => Err(bad()),
        }
    }

    /// The spec [`parse`](Self::parse) reads back.
    pub fn spec(self) -> String {
        match self {
            Self::Permits(n) => format!("permits:{n}"),
            Self::ReadWrite { write_percent } => format!("rw:{write_percent}"),
        }
    }

    /// The claim of one hold: the permit, or a read or (by chance) a write hold.
    pub fn draw(self) -> Claim {
        match self {
            Self::Permits(n) => Claim::permit(n),
            Self::ReadWrite { write_percent } if rand::random_range(0..100) < write_percent => {
                Claim::Write
            }
            Self::ReadWrite { .. } => Claim::Read,
        }
    }
}

/// One claimant process's work: `tasks` tasks on one service, `rounds` holds each of `hold`.
#[derive(Clone, Debug)]
pub struct ClaimPlan {
    /// The lock service's URL.
    pub url: String,
    /// The name every task claims.
    pub name: String,
    /// What the tasks take.
    pub mix: ClaimMix,
    /// Concurrent tasks in the process.
    pub tasks: usize,
    /// Holds per task.
    pub rounds: usize,
    /// How long each hold lasts.
    pub hold: Duration,
}

/// Runs `plan` (inside `lock-holder claims`): prints `held <start µs> <end µs> <r|w|p>` per
/// hold, then `done`.
///
/// # Cancel safety
///
/// Not meant to be cancelled: it is a process's whole life. Its tasks are spawned, so a
/// dropped `run` leaves them holding and releasing until the runtime ends with the process.
///
/// # Errors
///
/// The first failure of any task (connect, acquire within a minute, release).
pub async fn run(plan: ClaimPlan) -> Result<(), distlock::Error> {
    let lock = distlock::connect(&plan.url).await?;
    let tasks: Vec<_> = (0..plan.tasks)
        .map(|_| tokio::spawn(holds(Arc::clone(&lock), plan.clone())))
        .collect();
    for task in tasks {
        let done = task.await.map_err(|error| {
            distlock::Error::new(distlock::ErrorKind::Backend, format!("task: {error}"))
        })?;
        done?;
    }
    println!("done");
    Ok(())
}

async fn holds(lock: Arc<dyn DistributedLock>, plan: ClaimPlan) -> Result<(), distlock::Error> {
    let options = lock
        .default_options()
        .to_builder()
        .wait(Duration::from_secs(60))
        .build()?;
    for _ in 0..plan.rounds {
        let claim = plan.mix.draw();
        let guard = lock
            .acquire_claim_timeout_with(plan.name.as_str(), claim, &options)
            .await?;
        let start = wall_micros();
        tokio::time::sleep(plan.hold).await;
        let end = wall_micros();
        let kind = match claim {
            Claim::Write => 'w',
            Claim::Read => 'r',
            _ => 'p',
        };
        println!("held {start} {end} {kind}");
        guard.release().await?;
    }
    Ok(())
}

/// Starts `lock-holder claims` (the program at `holder`) for `plan`.
///
/// # Panics
///
/// When the process cannot start.
pub fn start(holder: &Path, plan: &ClaimPlan) -> Child {
    Command::new(holder)
        .args(["claims", &plan.url, &plan.name, &plan.mix.spec()])
        .args([plan.tasks, plan.rounds].map(|n| n.to_string()))
        .arg(plan.hold.as_millis().to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("spawn lock-holder: {error}"))
}

/// Waits for a claimant and returns its holds (a write hold is exclusive).
///
/// # Panics
///
/// When it failed or did not finish its report.
pub fn finish(child: Child) -> Vec<HoldInterval> {
    let output = child
        .wait_with_output()
        .unwrap_or_else(|error| panic!("lock-holder: {error}"));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && text.lines().last() == Some("done"),
        "lock-holder claims failed ({}): {text}",
        output.status
    );
    text.lines()
        .filter_map(|line| line.strip_prefix("held "))
        .map(|fields| {
            let fields: Vec<&str> = fields.split_whitespace().collect();
            let micros = |at: usize| -> u64 {
                fields
                    .get(at)
                    .and_then(|f| f.parse().ok())
                    .unwrap_or_else(|| panic!("bad hold: {fields:?}"))
            };
            HoldInterval {
                start_micros: micros(0),
                end_micros: micros(1),
                exclusive: fields.get(2) == Some(&"w"),
            }
        })
        .collect()
}
