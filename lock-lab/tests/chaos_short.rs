//! The chaos suite's short tier: two trials per scenario and backend against real servers and
//! real holder processes (`lock-holder work`), asserting what the safety guarantees promise.
//! `scripts/chaos` runs the same cells with more trials and writes the table.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError};

use lock_lab::chaos::{Backend, CellSummary, Runner, Scenario};
use tokio::sync::Mutex;

const TRIALS: usize = 2;

/// One runner per backend (its servers stay up between cells), running one cell at a time:
/// faults on a backend's servers and holders must not overlap. Cells of different backends
/// share no server or process, so two tests may run them side by side: a test that waits for a
/// backend's runner takes it as soon as the test ahead moves on to its next backend.
fn runner(backend: Backend) -> Arc<Mutex<Runner>> {
    type Runners = std::sync::Mutex<HashMap<Backend, Arc<Mutex<Runner>>>>;
    static RUNNERS: OnceLock<Runners> = OnceLock::new();
    let mut runners = RUNNERS
        .get_or_init(Runners::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let runner = runners.entry(backend).or_insert_with(|| {
        let holder = env!("CARGO_BIN_EXE_lock-holder").into();
        Arc::new(Mutex::new(Runner::new(holder, None)))
    });
    Arc::clone(runner)
}

/// Runs every backend of `scenario`; `None` (a loud skip) when a server is missing and servers
/// are not required.
async fn run(scenario: Scenario) -> Option<Vec<CellSummary>> {
    let mut cells = Vec::new();
    for &backend in scenario.backends() {
        let runner = runner(backend);
        let cell = runner
            .lock()
            .await
            .run_cell(scenario, backend, TRIALS)
            .await;
        eprintln!("{}", cell.json());
        if !cell.errors.is_empty() {
            assert!(
                !lock_testkit::servers_required(),
                "{} x {}: {:?}",
                scenario.id(),
                backend.id(),
                cell.errors
            );
            eprintln!(
                "SKIPPED {}: {:?} (run scripts/install-servers)",
                scenario.id(),
                cell.errors
            );
            return None;
        }
        cells.push(cell);
    }
    Some(cells)
}

fn no_stale_write_accepted(cell: &CellSummary) {
    assert_eq!(
        cell.sum(|o| o.verdict.stale_writes_accepted),
        0,
        "{} x {}: the fenced resource accepted a stale write: {}",
        cell.scenario.id(),
        cell.backend.id(),
        cell.json()
    );
}

fn second_holder_granted_every_trial(cell: &CellSummary) {
    assert_eq!(
        cell.count(|o| o.second_granted),
        TRIALS,
        "{} x {}: the lock never came back: {}",
        cell.scenario.id(),
        cell.backend.id(),
        cell.json()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paused_holder_overlaps_in_real_time_fencing_rejects_it_and_it_learns_on_resume() {
    paused_holder_is_fenced_and_learns_on_resume(Scenario::PausedHolder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paused_permit_holder_is_fenced_and_learns_before_its_permit_is_regranted() {
    paused_holder_is_fenced_and_learns_on_resume(Scenario::PausedPermitHolder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paused_reader_is_fenced_when_the_writer_gets_in() {
    paused_holder_is_fenced_and_learns_on_resume(Scenario::PausedReader).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paused_leader_is_fenced_by_its_epoch_and_learns_on_resume() {
    paused_holder_is_fenced_and_learns_on_resume(Scenario::PausedLeader).await;
}

/// A paused holder's hold ends under it (lease or session), B is granted while A still
/// believes it holds, A's writes are rejected by the fence, and A hears of the loss on resume.
async fn paused_holder_is_fenced_and_learns_on_resume(scenario: Scenario) {
    let Some(cells) = run(scenario).await else {
        return;
    };
    for cell in &cells {
        let what = format!(
            "{} x {}: {}",
            cell.scenario.id(),
            cell.backend.id(),
            cell.json()
        );
        // Every backend here is lease- or session-based: a paused holder cannot stop the lease
        // from running out, so B is granted while A still believes it holds.
        assert_eq!(
            cell.count(|o| o.verdict.overlaps >= 1),
            TRIALS,
            "no overlap: {what}"
        );
        assert_eq!(
            cell.count(|o| o.verdict.stale_writes_attempted >= 1),
            TRIALS,
            "{what}"
        );
        no_stale_write_accepted(cell);
        assert_eq!(
            cell.count(|o| o.lost_after_resume_ms.is_some()),
            TRIALS,
            "no lost signal after resume: {what}"
        );
        assert_eq!(cell.sum(|o| o.holds_lost), TRIALS, "{what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_holder_frees_the_lock_and_nothing_stale_gets_through() {
    killed_holder_frees_its_hold(Scenario::KilledHolder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_permit_holder_frees_its_permit() {
    killed_holder_frees_its_hold(Scenario::KilledPermitHolder).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_reader_lets_the_writer_in() {
    killed_holder_frees_its_hold(Scenario::KilledReader).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_leader_lets_a_candidate_lead() {
    killed_holder_frees_its_hold(Scenario::KilledLeader).await;
}

/// A killed holder's hold ends by lease or session expiry; B gets in, with no overlap and
/// nothing stale written.
async fn killed_holder_frees_its_hold(scenario: Scenario) {
    let Some(cells) = run(scenario).await else {
        return;
    };
    for cell in &cells {
        no_stale_write_accepted(cell);
        second_holder_granted_every_trial(cell);
        assert_eq!(cell.sum(|o| o.verdict.overlaps), 0, "{}", cell.json());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn blackholed_holder_signals_loss_and_nothing_stale_gets_through() {
    let Some(cells) = run(Scenario::LinkBlackholed).await else {
        return;
    };
    for cell in &cells {
        no_stale_write_accepted(cell);
        second_holder_granted_every_trial(cell);
        // Cut off, a holder learns of the loss on its own clock, before the lock passes on.
        assert_eq!(
            cell.sum(|o| o.verdict.lost_after_next_grant),
            0,
            "{}",
            cell.json()
        );
        assert_eq!(cell.sum(|o| o.verdict.overlaps), 0, "{}", cell.json());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paused_server_loses_no_fenced_write() {
    let Some(cells) = run(Scenario::ServerPaused).await else {
        return;
    };
    for cell in &cells {
        no_stale_write_accepted(cell);
        second_holder_granted_every_trial(cell);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restarted_server_keeps_fencing_tokens_rising() {
    let Some(cells) = run(Scenario::ServerRestarted).await else {
        return;
    };
    for cell in &cells {
        // The Redis test server persists nothing: a restart forgets the lock key and the fence
        // counter, so a second holder is granted while the first still holds. Its token still
        // rises (the server clock floors it), so fencing turns the first holder's writes away.
        no_stale_write_accepted(cell);
        assert_eq!(
            cell.sum(|o| o.verdict.token_order_violations),
            0,
            "{}",
            cell.json()
        );
        if cell.backend != Backend::Redis {
            assert_eq!(cell.sum(|o| o.verdict.overlaps), 0, "{}", cell.json());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leader_kill_and_minority_pause_keep_one_holder() {
    for scenario in [Scenario::LeaderKilled, Scenario::RedlockMinorityPaused] {
        let Some(cells) = run(scenario).await else {
            return;
        };
        for cell in &cells {
            no_stale_write_accepted(cell);
            assert_eq!(cell.sum(|o| o.verdict.overlaps), 0, "{}", cell.json());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_failover_grants_twice_without_wait_and_wait_refuses_the_unreplicated_grant() {
    let Some(cells) = run(Scenario::RedisFailover).await else {
        return;
    };
    for cell in &cells {
        let what = cell.json();
        match cell.backend {
            Backend::Redis | Backend::RedisCluster | Backend::RedisSentinel => {
                // The seeds' lost lock: the promoted replica grants again. A promotion by hand
                // is quick enough that A still holds; behind Sentinels the fail-over outlasts
                // A's lease, so A's hold has ended first; in a cluster, A's renewal reaching
                // the promoted replica and B's grant race (either may come first). The
                // replica's fence counter never saw A's grant, but the server clock floors the
                // token, so it still rises and fencing turns A's late writes away.
                let overlapped = cell.count(|o| o.second_granted && o.verdict.overlaps >= 1);
                match cell.backend {
                    Backend::Redis => assert_eq!(overlapped, TRIALS, "{what}"),
                    Backend::RedisSentinel => assert_eq!(overlapped, 0, "{what}"),
                    _ => {}
                }
                assert_eq!(cell.count(|o| o.second_granted), TRIALS, "{what}");
                assert_eq!(cell.sum(|o| o.verdict.token_order_violations), 0, "{what}");
                no_stale_write_accepted(cell);
                // And the failed-over holder hears, by its local lease end at the latest.
                assert_eq!(
                    cell.count(|o| o.lost_after_fault_ms.is_some()),
                    TRIALS,
                    "{what}"
                );
            }
            Backend::RedisWait | Backend::RedisClusterWait | Backend::RedisSentinelWait => {
                assert_eq!(cell.count(|o| o.first_refused.is_some()), TRIALS, "{what}");
                assert_eq!(cell.count(|o| o.second_granted), TRIALS, "{what}");
                assert_eq!(cell.sum(|o| o.verdict.overlaps), 0, "{what}");
                no_stale_write_accepted(cell);
            }
            other => panic!("failover has no {other:?} cell"),
        }
    }
}

/// A holder that still hears the server but cannot be heard learns before the lock passes on;
/// so does a holder whose connections stall (or it reconnects and keeps its hold).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_way_and_stalled_links_are_noticed_before_the_lock_passes_on() {
    for scenario in [Scenario::OneWayPartition, Scenario::LinkStalled] {
        let Some(cells) = run(scenario).await else {
            return;
        };
        for cell in &cells {
            let what = cell.json();
            assert_eq!(cell.sum(|o| o.verdict.overlaps), 0, "{what}");
            assert_eq!(cell.sum(|o| o.verdict.lost_after_next_grant), 0, "{what}");
            no_stale_write_accepted(cell);
            second_holder_granted_every_trial(cell);
        }
    }
}

/// A database server whose clock jumps past the lease hands the lock out again at once (the
/// overlap the lease design predicts) and fencing turns every late write away; ZooKeeper's
/// session clock is monotonic and does not move.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_server_clock_step_is_fenced() {
    let Some(cells) = run(Scenario::ServerClockStep).await else {
        return;
    };
    for cell in &cells {
        let what = cell.json();
        no_stale_write_accepted(cell);
        second_holder_granted_every_trial(cell);
        if cell.backend == Backend::Zookeeper {
            assert_eq!(cell.sum(|o| o.verdict.overlaps), 0, "{what}");
        }
    }
}

/// A replica that stops acknowledging refuses grants under WAIT and costs the holder nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lagging_replica_refuses_grants_under_wait() {
    let Some(cells) = run(Scenario::ReplicaLagging).await else {
        return;
    };
    for cell in &cells {
        let what = cell.json();
        assert_eq!(cell.count(|o| o.second_refused.is_some()), TRIALS, "{what}");
        assert_eq!(cell.sum(|o| o.holds_lost), 0, "{what}");
        assert_eq!(cell.sum(|o| o.lost_signals), 0, "{what}");
        no_stale_write_accepted(cell);
    }
}
