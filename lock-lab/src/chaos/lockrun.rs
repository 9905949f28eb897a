//! Trials with `lockrun` as holder A: its command writes to the fenced resource from a
//! background grandchild (`sh -c 'writer & wait'`); the fault strikes lockrun itself; B is a
//! second `lockrun` whose command writes for 300 ms. What counts is whether A's command, or
//! anything it started, writes after B's command has begun: lockrun promises it never does.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::lab::Lab;
use super::trial::TrialOutcome;
use super::{Backend, Scenario};
use crate::fence::{FenceServer, Verdict, Write, monotonic_ns};

/// How long B waits for the lock.
const B_WAIT: Duration = Duration::from_secs(15);

/// Runs one lockrun trial of `scenario` on `backend`.
pub(crate) async fn run(
    lab: &mut Lab,
    scenario: Scenario,
    backend: Backend,
) -> Result<TrialOutcome, String> {
    let lockrun = lab
        .lockrun
        .clone()
        .ok_or("lockrun is not built beside the chaos program")?;
    let fence = FenceServer::start().await;
    let url = lab.url(backend)?;
    let name = format!("chaos/lockrun/{:016x}", rand::random::<u64>());
    let writer = format!("\"$HOLDER\" fence-write {} 0 & wait", fence.addr());
    let mut a = start(
        &lockrun,
        &lab.holder,
        &url,
        &name,
        &["--lease", "800ms", "--grace", "100ms"],
        &["sh", "-c", &writer],
    )?;
    let began = tokio::time::Instant::now();
    while !fence.resource().writes().iter().any(|w| w.client == 0) {
        if began.elapsed() > Duration::from_secs(10) {
            let _ = a.kill();
            return Err("lockrun A's command never wrote".into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let fault_ns = monotonic_ns();
    let pid = a.id().to_string();
    match scenario {
        Scenario::LockrunKilled => a.kill().map_err(|e| e.to_string())?,
        _ => signal(&pid, "-STOP")?,
    }
    let addr = fence.addr().to_string();
    let wait = format!("{}ms", B_WAIT.as_millis());
    let holder = lab.holder.display().to_string();
    let b_command = [holder.as_str(), "fence-write", &addr, "1", "300"];
    let mut b = start(
        &lockrun,
        &lab.holder,
        &url,
        &name,
        &["--lease", "800ms", "--wait", &wait],
        &b_command,
    )?;
    let b_status = wait_exit(&mut b, B_WAIT + Duration::from_secs(5)).await;
    if scenario == Scenario::LockrunFrozen {
        signal(&pid, "-CONT")?;
    }
    let a_status = wait_exit(&mut a, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(outcome(
        &fence.resource().writes(),
        fault_ns,
        a_status,
        b_status,
    ))
}

/// Starts `lockrun` with its own flags `extra` for `command`.
fn start(
    lockrun: &Path,
    holder: &Path,
    url: &str,
    name: &str,
    extra: &[&str],
    command: &[&str],
) -> Result<Child, String> {
    Command::new(lockrun)
        .args(["--url", url, "--name", name, "--quiet"])
        .args(extra)
        .arg("--")
        .args(command)
        .env("HOLDER", holder)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("spawn lockrun: {error}"))
}

fn signal(pid: &str, signal: &str) -> Result<(), String> {
    Command::new("kill")
        .args([signal, pid])
        .status()
        .map(drop)
        .map_err(|error| error.to_string())
}

/// The exit status, waiting at most `limit` (then killing it).
async fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return status.code();
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn outcome(
    writes: &[Write],
    fault_ns: u64,
    a_status: Option<i32>,
    b_status: Option<i32>,
) -> TrialOutcome {
    let b_first = writes
        .iter()
        .filter(|w| w.client == 1)
        .map(|w| w.at_ns)
        .min();
    let late: Vec<&Write> = writes
        .iter()
        .filter(|w| w.client == 0 && b_first.is_some_and(|b| w.at_ns >= b))
        .collect();
    let ms = |ns: u64| ns as f64 / 1e6;
    TrialOutcome {
        verdict: Verdict {
            grants: usize::from(writes.iter().any(|w| w.client == 0))
                + usize::from(b_first.is_some()),
            overlaps: usize::from(!late.is_empty()),
            token_order_violations: 0,
            stale_writes_attempted: late.len(),
            stale_writes_accepted: late.iter().filter(|w| w.accepted).count(),
            holds_superseded: usize::from(!late.is_empty()),
            lost_before_next_grant: 0,
            lost_after_next_grant: 0,
        },
        faults: 1,
        lost_signals: 0,
        holds_lost: usize::from(b_first.is_some()),
        holds_lost_by_killed: 0,
        recovery_ms: b_first.map(|at| ms(at.saturating_sub(fault_ns))),
        lost_after_resume_ms: None,
        lost_after_fault_ms: None,
        writes_after_next_grant: Some(late.len()),
        first_refused: None,
        second_granted: b_first.is_some(),
        second_refused: match b_status {
            Some(0) => None,
            status => Some(format!(
                "B's lockrun exited with {status:?} (A's: {a_status:?})"
            )),
        },
        current_holder_rejected: 0,
    }
}
