//! `lock-holder work`: one holder process of a chaos trial.
//!
//! It acquires a lock (or a semaphore permit, a read or write hold, or leadership of an
//! election: [`Holding`]), then writes to a fenced resource (a [`FenceServer`](crate::fence::FenceServer))
//! every [`WRITE_EVERY`] until its hold time is up, `release` arrives on stdin (or stdin closes:
//! its parent is gone), or its lost
//! signal fires. It writes *before* looking at the lost signal, as a holder resuming from a
//! pause would: it stops after the first write begun once the signal had fired, so a stale hold
//! always attempts at least one write after it was lost. It prints its hold events
//! on stdout, stamped with [`monotonic_ns`]:
//!
//! - `granted TOKEN NS`, or `refused NS REASON` (then exits with status 2);
//! - `lost NS` when the lost signal fires (then exits);
//! - `released NS` when it stops believing it holds the lock and releases it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{AcquireOptions, Claim, DistributedLock, LockName};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::fence::{FenceClient, monotonic_ns};

/// How often a holder writes to the fenced resource.
pub const WRITE_EVERY: Duration = Duration::from_millis(20);

/// What one `work` process does.
#[derive(Debug, Clone)]
pub struct WorkPlan {
    /// The lock service's URL (`redis://...?wait_replicas=1&wait_timeout=300ms` for grants a
    /// replica must acknowledge).
    pub url: String,
    /// The lock's name.
    pub name: String,
    /// The lease asked for.
    pub lease: Duration,
    /// How long to wait for the grant.
    pub wait: Duration,
    /// How long to hold before releasing.
    pub hold: Duration,
    /// The fenced resource's address.
    pub fence: SocketAddr,
    /// This writer's id at the resource.
    pub client: usize,
    /// What to hold.
    pub holding: Holding,
}

/// What a `work` process holds: the lock of the name, a permit or read-write hold of it, or
/// leadership of its election (the epoch is the fencing token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holding {
    /// The name's lock.
    Lock,
    /// A permit or a read or write hold.
    Claim(Claim),
    /// Leadership of the name's election.
    Leadership,
}

/// What to hold as `lock-holder work` takes it: `permits:N`, `read`, `write` or `elect`.
///
/// # Errors
///
/// A message when `spec` is none of those.
pub fn parse_holding(spec: &str) -> Result<Holding, String> {
    match spec {
        "read" => Ok(Holding::Claim(Claim::Read)),
        "write" => Ok(Holding::Claim(Claim::Write)),
        "elect" => Ok(Holding::Leadership),
        _ => spec
            .strip_prefix("permits:")
            .and_then(|n| n.parse().ok())
            .map(|n| Holding::Claim(Claim::permit(n)))
            .ok_or_else(|| format!("not a holding (permits:N, read, write, elect): {spec:?}")),
    }
}

type Failure = Box<dyn std::error::Error>;

/// Runs one holder as the module documentation says; returns the process's exit status.
///
/// # Cancel safety
///
/// Not meant to be cancelled: it is a process's whole life. Dropped, it drops the guard (whose
/// drop releases the lock in the background) without printing `released`.
///
/// # Errors
///
/// An unusable plan (bad name or options) or a lost connection to the fenced resource.
pub async fn run(plan: &WorkPlan) -> Result<i32, Failure> {
    let name = LockName::new(plan.name.clone())?;
    let options = AcquireOptions::builder()
        .lease(plan.lease)
        .wait(plan.wait)
        .build()?;
    let mut fence = FenceClient::connect(plan.fence).await?;
    let acquired = match connect(&plan.url).await {
        Ok(lock) => match plan.holding {
            Holding::Lock => lock.acquire_with(&name, &options).await,
            Holding::Claim(claim) => lock.acquire_claim_with(&name, claim, &options).await,
            Holding::Leadership => lock.campaign_with(&name, &options).await,
        },
        Err(error) => Err(error),
    };
    let guard = match acquired {
        Ok(Some(guard)) => guard,
        Ok(None) => return Ok(refused("not granted within the wait")),
        Err(error) => return Ok(refused(&error.to_string())),
    };
    let token = guard.fencing_token();
    println!("granted {token} {}", monotonic_ns());
    let lost = guard.lost().clone();
    let watcher = tokio::spawn(async move {
        lost.cancelled().await;
        println!("lost {}", monotonic_ns());
    });
    let deadline = tokio::time::Instant::now() + plan.hold;
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    loop {
        tokio::select! {
            () = tokio::time::sleep(WRITE_EVERY) => {}
            line = next_line(&mut stdin) => match line {
                Some(line) if line.trim() == "release" => break,
                Some(_) => {}
                // Closed stdin: whoever started this holder is gone; do not outlive it.
                None => break,
            }
        }
        // The signal is looked at one write late: a write already under way when the holder
        // was paused still counts as written before the pause.
        let lost_before_write = guard.is_lost();
        fence.write(plan.client, token).await?;
        if lost_before_write {
            let _ = watcher.await;
            return Ok(0);
        }
        if tokio::time::Instant::now() >= deadline {
            break;
        }
    }
    println!("released {}", monotonic_ns());
    watcher.abort();
    // "Not ours any more" is an answer, not a failure of this process.
    let _ = guard.release().await;
    Ok(0)
}

/// The next stdin line; `None` once stdin is closed.
async fn next_line(stdin: &mut tokio::io::Lines<BufReader<tokio::io::Stdin>>) -> Option<String> {
    stdin.next_line().await.ok().flatten()
}

fn refused(reason: &str) -> i32 {
    println!("refused {} {}", monotonic_ns(), reason.replace('\n', " "));
    2
}

/// `distlock::connect`.
async fn connect(url: &str) -> lock_core::Result<Arc<dyn DistributedLock>> {
    distlock::connect(url).await
}
