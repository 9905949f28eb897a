//! `lock_core::backend::timeout`: a request ends at its limit, however the limits in flight
//! are ordered and whichever runtime polls it; a request that completes in time returns its
//! output; an unrepresentable limit sets none.

use std::future::pending;
use std::time::{Duration, Instant};

use lock_core::backend::{Elapsed, timeout};

/// Longer than any limit these tests wait out: a limit not kept fails the test rather than
/// hanging it.
const GUARD: Duration = Duration::from_secs(5);

/// How far past its limit a request may end on a loaded machine.
const SLACK: Duration = Duration::from_millis(900);

async fn ends_within(limit: Duration) -> Duration {
    let started = Instant::now();
    let ended = tokio::time::timeout(GUARD, timeout(limit, pending::<()>()))
        .await
        .expect("the limit was not kept");
    assert_eq!(ended, Err(Elapsed));
    started.elapsed()
}

#[tokio::test]
async fn a_request_that_never_completes_ends_at_its_limit() {
    let limit = Duration::from_millis(150);
    let took = ends_within(limit).await;
    assert!(took >= limit, "ended after {took:?}, before its limit");
    assert!(took < limit + SLACK, "ended after {took:?}");
}

#[tokio::test]
async fn a_request_that_completes_in_time_returns_its_output() {
    assert_eq!(timeout(Duration::from_secs(1), async { 7 }).await, Ok(7));
    let slept = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        "slept"
    };
    assert_eq!(timeout(Duration::from_secs(1), slept).await, Ok("slept"));
}

#[tokio::test]
async fn a_zero_limit_ends_a_request_that_waits() {
    assert_eq!(timeout(Duration::ZERO, async { 1 }).await, Ok(1));
    assert_eq!(timeout(Duration::ZERO, pending::<()>()).await, Err(Elapsed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shorter_limit_set_after_a_longer_one_ends_first() {
    let long = tokio::spawn(timeout(Duration::from_secs(60), pending::<()>()));
    // The keeper sleeps for the long limit by now.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let limit = Duration::from_millis(150);
    let took = ends_within(limit).await;
    assert!(took < limit + SLACK, "the short limit ended after {took:?}");
    assert!(!long.is_finished(), "the long limit ended early");
    long.abort();
}

#[tokio::test]
async fn many_limits_in_flight_each_end_at_their_own() {
    let started = Instant::now();
    let limits = [300_u64, 100, 200, 100, 400];
    let requests = limits.map(|ms| async move {
        let ended = timeout(Duration::from_millis(ms), pending::<()>()).await;
        (ended, started.elapsed())
    });
    let ended = tokio::time::timeout(GUARD, futures_util::future::join_all(requests))
        .await
        .expect("a limit was not kept");
    for (ms, (ended, took)) in limits.iter().zip(ended) {
        assert_eq!(ended, Err(Elapsed));
        let limit = Duration::from_millis(*ms);
        assert!(
            took >= limit && took < limit + SLACK,
            "{ms} ms limit ended after {took:?}"
        );
    }
}

#[tokio::test]
async fn a_limit_too_long_for_the_clock_sets_none() {
    assert_eq!(timeout(Duration::MAX, async { 3 }).await, Ok(3));
    let slept = tokio::time::sleep(Duration::from_millis(10));
    assert_eq!(timeout(Duration::MAX, slept).await, Ok(()));
}

#[test]
fn limits_hold_on_any_runtime_after_another_ended() {
    let limit = Duration::from_millis(100);
    for _ in 0..3 {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let took = runtime.block_on(ends_within(limit));
        assert!(took < limit + SLACK, "ended after {took:?}");
        drop(runtime);
    }
}
