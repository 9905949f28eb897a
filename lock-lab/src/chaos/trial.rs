//! One trial: holder A takes the lock, the scenario's fault strikes, holder B asks for the lock;
//! then both reports and the fenced resource's writes go to the checker.

use std::time::Duration;

use super::lab::{LEASE, Lab};
use super::scenarios::{self, Setup};
use super::worker::{Report, Worker};
use super::{Backend, Scenario};
use crate::fence::{FenceServer, History, Verdict, check};

/// How long A waits for its grant, and how long it holds unless told to release.
const A_WAIT: Duration = Duration::from_secs(10);
const A_HOLD: Duration = Duration::from_secs(600);
/// How long B waits for its grant, and how long it holds.
pub(crate) const B_WAIT: Duration = Duration::from_secs(15);
const B_HOLD: Duration = Duration::from_millis(300);

/// What one trial measured.
#[derive(Debug, Clone)]
pub struct TrialOutcome {
    /// The checker's verdict over both holders' events and the resource's writes.
    pub verdict: Verdict,
    /// Faults injected (process signals, restarts, link changes count one each per fault).
    pub faults: usize,
    /// Lost signals the holders reported.
    pub lost_signals: usize,
    /// Holds that ended without their holder releasing before another holder was granted.
    pub holds_lost: usize,
    /// Of those, holds whose holder was killed (a dead process raises no signal).
    pub holds_lost_by_killed: usize,
    /// From the fault to B's grant, in milliseconds (`None`: B was not granted).
    pub recovery_ms: Option<f64>,
    /// Paused holder only: from SIGCONT to the holder's lost signal, in milliseconds.
    pub lost_after_resume_ms: Option<f64>,
    /// From the fault to A's lost signal, in milliseconds (`None`: it did not fire).
    pub lost_after_fault_ms: Option<f64>,
    /// lockrun scenarios: writes by A's command (or its children) after B's command first wrote.
    pub writes_after_next_grant: Option<usize>,
    /// A's acquisition was refused (e.g. `WAIT` found no replica acknowledgement).
    pub first_refused: Option<String>,
    /// B was granted the lock.
    pub second_granted: bool,
    /// Why B was not granted, as B reported it.
    pub second_refused: Option<String>,
    /// Writes the resource rejected from a holder that was the newest grant at the time.
    pub current_holder_rejected: usize,
}

/// Runs one trial of `scenario` on `backend`.
pub(crate) async fn run(
    lab: &mut Lab,
    scenario: Scenario,
    backend: Backend,
) -> Result<TrialOutcome, String> {
    let fence = FenceServer::start().await;
    let name = format!("chaos/{:016x}", rand::random::<u64>());
    let mut setup = Setup::prepare(lab, scenario, backend, &name).await?;
    let holder = lab.holder.clone();
    let (claim_a, claim_b) = scenario.claims();
    let mut a = Worker::spawn(
        &holder,
        &setup.url_a,
        (&name, claim_a),
        (LEASE, A_WAIT, A_HOLD),
        fence.addr(),
        0,
    )?;
    let first = a.wait_granted(A_WAIT + Duration::from_secs(5)).await;
    match (&first.granted, &first.refused) {
        (None, None) => return Err("holder A was neither granted nor refused".into()),
        // Only the failover scenario expects a refusal (WAIT without a replica's acknowledgement).
        (None, Some(why)) if scenario != Scenario::RedisFailover => {
            return Err(format!("holder A was refused: {why}"));
        }
        _ => {}
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let spawn_b = |url: &str| {
        Worker::spawn(
            &holder,
            url,
            (&name, claim_b),
            (LEASE, B_WAIT, B_HOLD),
            fence.addr(),
            1,
        )
    };
    let strike = scenarios::strike(lab, scenario, backend, &mut setup, &mut a, spawn_b).await;
    let heal = scenarios::heal(lab, scenario, backend, &mut setup);
    let strike = strike?;
    heal?;
    if scenario == Scenario::RedisFailover {
        // The failed-over holder must hear too: by its renewal failing or finding the key
        // gone, or by its local lease end.
        a.wait_for(LEASE * 3, |report| report.lost_ns.is_some())
            .await;
    }
    a.release();
    let report_a = a.finish(Duration::from_secs(3)).await;
    let report_b = match strike.b {
        Some(b) => Some(b.finish(Duration::from_secs(3)).await),
        None => None,
    };
    let writes = fence.resource().writes();
    if std::env::var_os("CHAOS_DEBUG").is_some() {
        let tail: Vec<_> = writes.iter().rev().take(6).rev().collect();
        eprintln!("last writes {tail:?}");
        eprintln!(
            "fault at {} resumed {:?}\nA {report_a:?}\nB {report_b:?}",
            strike.timing.fault_ns, strike.timing.resumed_ns
        );
    }
    Ok(outcome(
        &report_a,
        report_b.as_ref(),
        &writes,
        &strike.timing,
    ))
}

/// When the fault struck and (for a paused holder) when the holder was resumed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Timing {
    pub(crate) fault_ns: u64,
    pub(crate) resumed_ns: Option<u64>,
    pub(crate) faults: usize,
}

fn outcome(
    a: &Report,
    b: Option<&Report>,
    writes: &[crate::fence::Write],
    timing: &Timing,
) -> TrialOutcome {
    let history = History::new();
    for (client, report) in std::iter::once((0, a)).chain(b.map(|b| (1, b))) {
        for (event, at) in report.events() {
            history.record_at(client, event, at);
        }
    }
    let verdict = check(&history.events(), writes);
    let b_granted_ns = b.and_then(|b| b.granted).map(|(_, at)| at);
    let a_lost_its_hold = match (a.granted, b_granted_ns) {
        (Some((_, a_at)), Some(b_at)) => a_at < b_at && a.released_ns.is_none_or(|r| r > b_at),
        _ => false,
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    TrialOutcome {
        faults: timing.faults,
        lost_signals: usize::from(a.lost_ns.is_some())
            + usize::from(b.is_some_and(|b| b.lost_ns.is_some())),
        holds_lost: usize::from(a_lost_its_hold),
        holds_lost_by_killed: usize::from(
            a_lost_its_hold
                && a.lost_ns.is_none()
                && a.killed_ns
                    .is_some_and(|k| b_granted_ns.is_some_and(|b| k < b)),
        ),
        recovery_ms: b_granted_ns.map(|at| ms(at.saturating_sub(timing.fault_ns))),
        lost_after_resume_ms: timing
            .resumed_ns
            .zip(a.lost_ns)
            .map(|(resumed, lost)| ms(lost.saturating_sub(resumed))),
        lost_after_fault_ms: a
            .lost_ns
            .map(|lost| ms(lost.saturating_sub(timing.fault_ns))),
        writes_after_next_grant: None,
        first_refused: a.refused.clone(),
        second_granted: b_granted_ns.is_some(),
        second_refused: b.and_then(|b| b.refused.clone()),
        current_holder_rejected: current_holder_rejected(a, b, writes),
        verdict,
    }
}

/// Rejected writes by the holder granted last before the write: the fence turned away the
/// legitimate holder (as when a restarted server hands out smaller tokens).
fn current_holder_rejected(
    a: &Report,
    b: Option<&Report>,
    writes: &[crate::fence::Write],
) -> usize {
    let grants = [
        a.granted.map(|(_, at)| (0, at)),
        b.and_then(|b| b.granted).map(|(_, at)| (1, at)),
    ];
    writes
        .iter()
        .filter(|write| !write.accepted)
        .filter(|write| {
            grants
                .iter()
                .flatten()
                .filter(|(_, at)| *at <= write.at_ns)
                .max_by_key(|(_, at)| *at)
                .is_some_and(|(client, _)| *client == write.client)
        })
        .count()
}
