//! The safety checker reports broken locks, and the fence server judges writes by token.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLock, DistributedLockExt, MemoryLock};
use lock_lab::fence::{FenceClient, FenceServer, FencedResource, History, HoldEvent, check};
use lock_testkit::broken::{Breakage, BrokenLock};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn checker_reports_overlaps_of_a_lock_without_mutual_exclusion() {
    let lock: Arc<dyn DistributedLock> = Arc::new(BrokenLock::new(Breakage::NoMutualExclusion));
    let (history, resource) = (Arc::new(History::new()), Arc::new(FencedResource::new()));
    // Grants are recorded in the order their tokens were handed out, as a real lock's grants
    // are: without this, a client preempted between its grant and its record shows up as a
    // token order violation the lock never made. The holds themselves still overlap.
    let in_token_order = Arc::new(tokio::sync::Mutex::new(()));
    let mut tasks = Vec::new();
    for client in 0..4 {
        let (lock, history, resource, in_token_order) = (
            Arc::clone(&lock),
            Arc::clone(&history),
            Arc::clone(&resource),
            Arc::clone(&in_token_order),
        );
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                let granting = in_token_order.lock().await;
                let guard = lock.acquire("checker/overlap").await.expect("acquire");
                history.record(client, HoldEvent::Granted(guard.fencing_token()));
                resource.write(client, guard.fencing_token());
                drop(granting);
                tokio::time::sleep(Duration::from_millis(2)).await;
                resource.write(client, guard.fencing_token());
                history.record(client, HoldEvent::Released);
                guard.release().await.expect("release");
            }
        }));
    }
    for task in tasks {
        task.await.expect("client");
    }
    let verdict = check(&history.events(), &resource.writes());
    assert!(
        verdict.overlaps > 0,
        "no overlaps reported for a lock without mutual exclusion: {verdict:?}"
    );
    assert_eq!(
        verdict.stale_writes_accepted, 0,
        "increasing tokens must still fence: {verdict:?}"
    );
}

/// A holder that stops running past its lease (as a paused process would), then resumes and
/// writes. Returns the checker's verdict.
async fn paused_holder(lock: Arc<dyn DistributedLock>) -> lock_lab::fence::Verdict {
    let (history, resource) = (History::new(), FencedResource::new());
    let lease = Duration::from_millis(300);
    let options = AcquireOptions::builder()
        .lease(lease)
        .auto_renew(false)
        .build()
        .expect("options");
    let stale = lock
        .acquire_timeout_with("checker/paused", &options)
        .await
        .expect("acquire");
    history.record(0, HoldEvent::Granted(stale.fencing_token()));
    resource.write(0, stale.fencing_token());
    tokio::time::sleep(lease * 2).await; // "paused": the holder neither renews nor looks.
    let fresh = lock
        .acquire_timeout("checker/paused", Duration::from_secs(2))
        .await
        .expect("second acquire");
    history.record(1, HoldEvent::Granted(fresh.fencing_token()));
    resource.write(1, fresh.fencing_token());
    resource.write(0, stale.fencing_token()); // resumed: writes before checking its signal
    if stale.is_lost() {
        history.record(0, HoldEvent::Lost);
    }
    history.record(1, HoldEvent::Released);
    drop((stale, fresh));
    check(&history.events(), &resource.writes())
}

#[tokio::test]
async fn checker_shows_fencing_stops_a_resumed_holder() {
    let verdict = paused_holder(Arc::new(MemoryLock::new())).await;
    assert_eq!(verdict.overlaps, 1, "{verdict:?}");
    assert_eq!(
        (verdict.holds_superseded, verdict.lost_before_next_grant),
        (1, 0),
        "{verdict:?}"
    );
    assert_eq!(
        (
            verdict.stale_writes_attempted,
            verdict.stale_writes_accepted
        ),
        (1, 0),
        "{verdict:?}"
    );
}

#[tokio::test]
async fn checker_reports_stale_writes_under_repeating_tokens() {
    let verdict = paused_holder(Arc::new(BrokenLock::new(Breakage::RepeatingFencingTokens))).await;
    assert_eq!(
        verdict.stale_writes_accepted, 1,
        "a stale write got through but was not reported: {verdict:?}"
    );
    assert_eq!(verdict.token_order_violations, 1, "{verdict:?}");
}

#[tokio::test]
async fn fence_server_judges_writes_of_separate_connections_by_token() {
    let server = FenceServer::start().await;
    let mut first = FenceClient::connect(server.addr()).await.expect("connect");
    let mut second = FenceClient::connect(server.addr()).await.expect("connect");
    assert!(first.write(0, 5).await.expect("write"));
    assert!(second.write(1, 6).await.expect("write"));
    assert!(
        !first.write(0, 5).await.expect("write"),
        "a stale token was accepted"
    );
    assert!(
        second.write(1, 6).await.expect("write"),
        "the same token again was refused"
    );
    let judged: Vec<_> = server
        .resource()
        .writes()
        .iter()
        .map(|w| (w.client, w.token, w.accepted))
        .collect();
    assert_eq!(
        judged,
        vec![(0, 5, true), (1, 6, true), (0, 5, false), (1, 6, true)]
    );
}

/// Events as a holder process reports them: (client, event, at_ns).
fn verdict_of(events: &[(usize, HoldEvent, u64)]) -> lock_lab::fence::Verdict {
    let history = History::new();
    for &(client, event, at) in events {
        history.record_at(client, event, at);
    }
    check(&history.events(), &[])
}

#[test]
fn checker_ends_a_killed_holders_hold_and_times_lost_signals_against_the_next_grant() {
    use HoldEvent::{Granted, Killed, Lost, Released};
    let killed = verdict_of(&[(0, Granted(1), 100), (0, Killed, 200), (1, Granted(2), 300)]);
    assert_eq!(
        (killed.overlaps, killed.holds_superseded),
        (0, 0),
        "{killed:?}"
    );

    let in_time = verdict_of(&[(0, Granted(1), 100), (0, Lost, 250), (1, Granted(2), 300)]);
    assert_eq!(
        (
            in_time.overlaps,
            in_time.lost_before_next_grant,
            in_time.lost_after_next_grant
        ),
        (0, 1, 0),
        "{in_time:?}"
    );

    let late = verdict_of(&[
        (0, Granted(1), 100),
        (1, Granted(2), 300),
        (0, Lost, 350),
        (1, Released, 400),
    ]);
    assert_eq!(
        (
            late.overlaps,
            late.holds_superseded,
            late.lost_before_next_grant,
            late.lost_after_next_grant
        ),
        (1, 1, 0, 1),
        "{late:?}"
    );
}
