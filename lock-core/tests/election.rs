//! Elections on the memory backend: the cancel-safety promises of `campaign`, `next_change`
//! and `proclaim`, the observer stream, and an election kept apart from the mutex of its name.

use std::time::Duration;

use futures_util::StreamExt;
use lock_core::{
    DistributedLockExt, ElectionExt, ErrorKind, LockName, MemoryLock, Missed, RwLockExt,
};

const SHORT: Duration = Duration::from_millis(50);

#[tokio::test]
async fn a_dropped_campaign_leaves_no_candidate_behind() {
    let service = MemoryLock::new();
    let leading = service.campaign("jobs", "a").await.expect("campaign");
    let waiting = tokio::time::timeout(SHORT, service.campaign("jobs", "b")).await;
    assert!(waiting.is_err(), "a second candidate led beside the first");
    leading.resign().await.expect("resign");
    // Had the dropped campaign kept its place in line, this try would find it first.
    let next = service
        .try_campaign("jobs", "c")
        .await
        .expect("try_campaign");
    assert_eq!(
        next.expect("the dropped candidate still waits").value(),
        "c"
    );
}

#[tokio::test]
async fn a_dropped_next_change_loses_no_change() {
    let service = MemoryLock::new();
    let mut observer = service.observe("jobs").expect("observe");
    let first = observer.next_change().await.expect("first change");
    assert_eq!(first.leader, None);
    let idle = tokio::time::timeout(SHORT, observer.next_change()).await;
    assert!(idle.is_err(), "a change was reported while nothing changed");
    // The call above was dropped while it waited for a push: the change it would have seen
    // comes with the next call.
    let leading = service.campaign("jobs", "a").await.expect("campaign");
    let change = observer.next_change().await.expect("change");
    let leader = change.leader.expect("the new leader");
    assert_eq!(
        (leader.value.as_str(), leader.epoch),
        ("a", leading.epoch())
    );
    assert_eq!(change.missed, Missed::Nothing);
    leading.resign().await.expect("resign");
}

#[tokio::test]
async fn proclaim_after_loss_fails_as_lost_and_keeps_the_old_value() {
    let service = MemoryLock::new();
    let name = LockName::new("jobs").expect("name");
    let mut leading = service.campaign(&name, "a").await.expect("campaign");
    assert_eq!(service.sever_claims(&name), 1);
    let error = leading
        .proclaim("b")
        .await
        .expect_err("proclaimed after loss");
    assert_eq!(error.kind(), ErrorKind::Lost, "{error}");
    assert!(leading.is_lost(), "the lost signal did not fire");
    assert_eq!(leading.value(), "a");
    let bad = leading.proclaim("").await.expect_err("an empty value");
    assert_eq!(bad.kind(), ErrorKind::InvalidInput, "{bad}");
}

#[tokio::test]
async fn the_observer_stream_yields_the_leader_then_each_change() {
    let service = MemoryLock::new();
    let leading = service.campaign("jobs", "a").await.expect("campaign");
    let changes = service.observe("jobs").expect("observe").into_stream();
    tokio::pin!(changes);
    let now = changes.next().await.expect("an item").expect("a change");
    assert_eq!(now.leader.map(|leader| leader.value), Some("a".to_owned()));
    let first_epoch = leading.epoch();
    leading.resign().await.expect("resign");
    let gone = changes.next().await.expect("an item").expect("a change");
    assert_eq!(gone.leader, None);
    let next = service.campaign("jobs", "b").await.expect("campaign");
    let change = changes.next().await.expect("an item").expect("a change");
    let leader = change.leader.expect("the new leader");
    assert!(leader.epoch > first_epoch && leader.epoch == next.epoch());
    assert_eq!(change.missed, Missed::Nothing);
}

#[tokio::test]
async fn an_election_and_the_locks_of_its_name_are_apart() {
    let service = MemoryLock::new();
    let leading = service.campaign("jobs", "a").await.expect("campaign");
    let mutex = service.try_acquire("jobs").await.expect("try_acquire");
    let write = service.try_write("jobs").await.expect("try_write");
    assert!(
        mutex.is_some() && write.is_some(),
        "the election blocked a lock of its name"
    );
    assert_eq!(
        service
            .leader("jobs")
            .await
            .expect("leader")
            .map(|l| l.value),
        Some("a".into())
    );
    drop((mutex, write));
    leading.resign().await.expect("resign");
}

#[tokio::test]
async fn campaigning_with_options_publishes_the_value_and_times_out_as_timeout() {
    let service = MemoryLock::new();
    let options = lock_core::AcquireOptions::builder()
        .wait(SHORT)
        .owner_label("replaced")
        .build()
        .expect("options");
    let leading = service
        .campaign_timeout_with("jobs", "a", &options)
        .await
        .expect("campaign");
    let shown = service
        .leader("jobs")
        .await
        .expect("leader")
        .expect("a leader");
    assert_eq!(
        shown.value, "a",
        "the value replaces the options' owner label"
    );
    let refused = service.campaign_timeout_with("jobs", "b", &options).await;
    let error = refused.map(drop).expect_err("a second leader was elected");
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    let bad = service.campaign_timeout_with("jobs", "", &options).await;
    assert_eq!(
        bad.map(drop).expect_err("an empty value").kind(),
        ErrorKind::InvalidInput
    );
    let guard = leading.into_guard();
    guard.release().await.expect("releasing the guard resigns");
    assert_eq!(service.leader("jobs").await.expect("leader"), None);
}
