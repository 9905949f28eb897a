//! Elections: one leader at a time with rising epochs, the leader's value readable and
//! replaceable, observers that see every change or count what they missed, and a leader that
//! hears of its loss before anyone else leads.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lock_core::{DistributedLock, ElectionExt, ErrorKind, Missed};

use super::support::{client, client_if, supports, unique_name, unrenewed};
use crate::{ConformanceTarget, Occupancy, scaled_ms};

/// 4 candidates each lead 10 times; an occupancy detector never sees two leaders at once, the
/// epochs of successive leaders strictly rise, and `leader()` shows each leader's value and
/// epoch while it leads.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave a leadership on its own uniquely named
/// election until its lease ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn election_one_leader_at_a_time_with_rising_epochs(target: Arc<dyn ConformanceTarget>) {
    const CANDIDATES: usize = 4;
    const TERMS: usize = 10;
    let case = "election_one_leader_at_a_time";
    let Some(first) = client_if(&target, case, |c| c.election, "elections").await else {
        return;
    };
    let name = unique_name(case);
    let occupancy = Arc::new(Occupancy::new());
    let epochs = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for id in 0..CANDIDATES {
        let lock = if id == 0 {
            Arc::clone(&first)
        } else {
            client(&target).await
        };
        let (name, occupancy, epochs) = (name.clone(), Arc::clone(&occupancy), Arc::clone(&epochs));
        tasks.push(tokio::spawn(async move {
            let value = format!("candidate-{id}");
            for _ in 0..TERMS {
                let leading = lock
                    .campaign_timeout(&name, &value, scaled_ms(60_000))
                    .await
                    .unwrap_or_else(|error| panic!("campaign: {error}"));
                occupancy.enter_exclusive();
                epochs
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(leading.epoch());
                let shown = lock.leader(&name).await.expect("leader");
                let shown = shown.expect("no leader shown while one leads");
                assert_eq!(
                    (shown.value.as_str(), shown.epoch),
                    (value.as_str(), leading.epoch())
                );
                tokio::time::sleep(Duration::from_millis(rand::random_range(1..4))).await;
                occupancy.leave_exclusive();
                leading.resign().await.expect("resign");
            }
        }));
    }
    for task in tasks {
        task.await.expect("candidate task");
    }
    assert_eq!(
        occupancy.exclusive_overlaps(),
        0,
        "two candidates led at once"
    );
    let epochs = epochs
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    assert_eq!(epochs.len(), CANDIDATES * TERMS);
    for pair in epochs.windows(2) {
        assert!(
            pair[0] < pair[1],
            "epoch {} followed epoch {}",
            pair[1],
            pair[0]
        );
    }
}

/// Nobody leads a new election; a leader is shown with its value and epoch, a second
/// candidate is refused while it leads, a proclaimed value replaces the first under the same
/// epoch, resigning leaves no leader, and the next leader's epoch is higher. Bad values are
/// refused before any I/O.
///
/// # Cancel safety
///
/// As [`election_one_leader_at_a_time_with_rising_epochs`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn election_leader_value_proclaim_and_resign(target: Arc<dyn ConformanceTarget>) {
    let case = "election_leader_value_proclaim";
    let Some(a) = client_if(&target, case, |c| c.election, "elections").await else {
        return;
    };
    let b = client(&target).await;
    let name = unique_name(case);
    for bad in [
        "",
        "line\nbreak",
        "x".repeat(lock_core::MAX_OWNER_LABEL + 1).as_str(),
    ] {
        let refused = a.try_campaign(&name, bad).await.map(drop);
        let error = refused.expect_err("a bad value was accepted");
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    }
    assert_eq!(
        a.leader(&name).await.expect("leader"),
        None,
        "a leader before any campaign"
    );
    let mut leading = a.campaign(&name, "10.0.0.1:80").await.expect("campaign");
    let rival = b
        .try_campaign(&name, "10.0.0.2:80")
        .await
        .expect("try_campaign");
    assert!(rival.is_none(), "a second leader was elected");
    leading.proclaim("10.0.0.1:81").await.expect("proclaim");
    let shown = b.leader(&name).await.expect("leader").expect("a leader");
    assert_eq!(
        (shown.value.as_str(), shown.epoch),
        ("10.0.0.1:81", leading.epoch())
    );
    let first_epoch = leading.epoch();
    leading.resign().await.expect("resign");
    assert_eq!(
        b.leader(&name).await.expect("leader"),
        None,
        "a leader after resigning"
    );
    let next = b.campaign(&name, "10.0.0.2:80").await.expect("campaign");
    assert!(
        next.epoch() > first_epoch,
        "the next leader's epoch did not rise"
    );
    next.resign().await.expect("resign");
}

/// An observer whose poll would take an hour hears of a new leader, a new value and a
/// resignation within seconds: the store pushes each change.
///
/// # Cancel safety
///
/// As [`election_one_leader_at_a_time_with_rising_epochs`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn election_changes_are_pushed_to_observers(target: Arc<dyn ConformanceTarget>) {
    let case = "election_changes_are_pushed";
    let Some(a) = client_if(&target, case, |c| c.election, "elections").await else {
        return;
    };
    let b = client(&target).await;
    let name = unique_name(case);
    let (sender, mut changes) = tokio::sync::mpsc::unbounded_channel();
    let watched = name.clone();
    let observing = tokio::spawn(async move {
        let observer = b.observe(&watched).expect("observe");
        let mut observer = observer.poll_every(Duration::from_secs(3600));
        loop {
            let change = observer.next_change().await.expect("next change");
            if sender.send(change.leader).is_err() {
                return;
            }
        }
    });
    // Each change is made once the observer waits for its push (it read the store last).
    let mut pushed = async || {
        let next = tokio::time::timeout(scaled_ms(5000), changes.recv()).await;
        let next = next.expect("a change was not pushed within 5 s");
        let leader = next.expect("the observer ended");
        tokio::time::sleep(Duration::from_millis(300)).await;
        leader
    };
    assert_eq!(pushed().await, None, "a leader before any campaign");
    let mut leading = a.campaign(&name, "pushed-1").await.expect("campaign");
    let shown = pushed().await.expect("no leader after a campaign");
    assert_eq!(
        (shown.value.as_str(), shown.epoch),
        ("pushed-1", leading.epoch())
    );
    leading.proclaim("pushed-2").await.expect("proclaim");
    let shown = pushed().await.expect("no leader after proclaim");
    assert_eq!(
        (shown.value.as_str(), shown.epoch),
        ("pushed-2", leading.epoch())
    );
    leading.resign().await.expect("resign");
    assert_eq!(pushed().await, None, "a leader after resigning");
    observing.abort();
}

/// 8 observers that have seen a first leader follow the election through 100 more (each
/// leading briefly, some proclaiming a second value). Every observer sees epochs rise, and
/// counts each of the 100 leaders either as seen or in a reported gap: none passes unreported.
///
/// # Cancel safety
///
/// As [`election_one_leader_at_a_time_with_rising_epochs`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn election_observers_see_every_change_or_report_it(target: Arc<dyn ConformanceTarget>) {
    const OBSERVERS: usize = 8;
    const LEADERS: u64 = 100;
    let case = "election_observers_see_every_change";
    let Some(candidate) = client_if(&target, case, |c| c.election, "elections").await else {
        return;
    };
    let name = unique_name(case);
    // Gaps are counted from the first leader an observer sees.
    let first = candidate
        .campaign(&name, "leader-0")
        .await
        .expect("campaign");
    let ready = Arc::new(tokio::sync::Barrier::new(OBSERVERS + 1));
    let mut observers = Vec::new();
    for _ in 0..OBSERVERS {
        let lock = client(&target).await;
        let start = (first.epoch(), Arc::clone(&ready));
        observers.push(tokio::spawn(follow(lock, name.clone(), start)));
    }
    ready.wait().await;
    first.resign().await.expect("resign");
    let mut last = None;
    for term in 1..=LEADERS {
        let value = format!("leader-{term}");
        let mut leading = candidate.campaign(&name, &value).await.expect("campaign");
        if term % 10 == 0 {
            leading
                .proclaim(format!("{value}-again"))
                .await
                .expect("proclaim");
        }
        if term == LEADERS {
            last = Some(leading);
        } else {
            leading.resign().await.expect("resign");
        }
    }
    let last = last.expect("the last leader");
    for observer in observers {
        let counted = tokio::time::timeout(scaled_ms(30_000), observer)
            .await
            .expect("an observer never saw the last leader")
            .expect("observer task");
        assert_eq!(counted.last_epoch, last.epoch(), "the last epoch seen");
        assert_eq!(
            counted.seen + counted.missed,
            LEADERS,
            "an observer saw {} leaders and reported {} missed of {LEADERS}",
            counted.seen,
            counted.missed
        );
    }
    last.resign().await.expect("resign");
}

/// What one observer counted.
struct Counted {
    seen: u64,
    missed: u64,
    last_epoch: u64,
}

/// Follows `name` from its first leader, of epoch `start.0` (then waits at `start.1`), until
/// the 100th leader after it shows.
async fn follow(
    lock: Arc<dyn DistributedLock>,
    name: lock_core::LockName,
    start: (u64, Arc<tokio::sync::Barrier>),
) -> Counted {
    let (first_epoch, ready) = start;
    let mut observer = lock
        .observe(&name)
        .expect("observe")
        .poll_every(scaled_ms(1000));
    let first = observer.next_change().await.expect("first change");
    let first = first.leader.expect("no leader shown while one leads");
    assert_eq!(
        first.epoch, first_epoch,
        "the first change is not the leader now"
    );
    ready.wait().await;
    let mut counted = Counted {
        seen: 0,
        missed: 0,
        last_epoch: first_epoch,
    };
    loop {
        let change = observer.next_change().await.expect("next change");
        let Some(leader) = change.leader else {
            continue;
        };
        match change.missed {
            Missed::Nothing => {}
            Missed::Exactly(gap) => counted.missed += gap,
            other => panic!("an observer could not count its gap: {other:?}"),
        }
        if leader.epoch == counted.last_epoch {
            continue; // a new value of the same leader
        }
        assert!(
            leader.epoch > counted.last_epoch,
            "epoch {} after {}",
            leader.epoch,
            counted.last_epoch
        );
        counted.seen += 1;
        counted.last_epoch = leader.epoch;
        if leader.value.starts_with("leader-100") {
            return counted;
        }
    }
}

/// A leader whose lease runs out unrenewed hears it lost before a waiting candidate leads.
///
/// # Cancel safety
///
/// As [`election_one_leader_at_a_time_with_rising_epochs`].
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn election_lost_fires_before_another_leads(target: Arc<dyn ConformanceTarget>) {
    let case = "election_lost_fires_before_another_leads";
    let Some(a) = client_if(&target, case, |c| c.election, "elections").await else {
        return;
    };
    if !supports(&a, case, |c| c.lease_renewal, "client-set leases") {
        return;
    }
    let b = client(&target).await;
    let name = unique_name(case);
    let stale = a
        .campaign_with(&name, &unrenewed())
        .await
        .expect("campaign")
        .expect("elected");
    let fresh = b
        .campaign_timeout(&name, "fresh", scaled_ms(5000))
        .await
        .expect("campaign");
    assert!(
        stale.is_lost(),
        "another candidate led before the old leader heard of its loss"
    );
    assert!(
        fresh.epoch() > stale.fencing_token(),
        "the new epoch did not rise"
    );
    fresh.resign().await.expect("resign");
}
