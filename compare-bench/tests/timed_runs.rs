//! How a timed run counts: only grants within its window, and rounds of one Curator JVM.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use compare_bench::BenchResult;
use compare_bench::contend::{Contender, Held, Run, contend, contend_warmed};
use compare_bench::peers::curator::Curator;
use lock_testkit::servers::ZkServer;
use lock_testkit::{ServerError, require};

/// Grants its first acquisition at once and every later one after `later`.
struct SlowAfterFirst {
    acquired: AtomicUsize,
    later: Duration,
}

struct Nothing;

#[async_trait]
impl Held for Nothing {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        Ok(())
    }
}

#[async_trait]
impl Contender for SlowAfterFirst {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        if self.acquired.fetch_add(1, Ordering::Relaxed) > 0 {
            tokio::time::sleep(self.later).await;
        }
        Ok(Box::new(Nothing))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_after_the_deadline_is_neither_counted_nor_timed() {
    let client = Arc::new(SlowAfterFirst {
        acquired: AtomicUsize::new(0),
        later: Duration::from_millis(600),
    });
    let run = Run {
        duration: Duration::from_millis(100),
        hold: Duration::ZERO,
    };
    let outcome = contend(vec![client as Arc<dyn Contender>], run)
        .await
        .expect("run");
    assert_eq!(
        outcome.samples.len(),
        1,
        "the grant 600 ms in, after a 100 ms window, was counted"
    );
    assert!(
        outcome.seconds < 0.4,
        "the run was timed to {} s: past its window and last counted release",
        outcome.seconds
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_in_the_warm_up_is_not_counted() {
    let client = Arc::new(SlowAfterFirst {
        acquired: AtomicUsize::new(0),
        later: Duration::from_millis(400),
    });
    // Grants at 0 ms (warm-up), 400 ms (in the window, with 300 ms to spare on a loaded
    // machine) and 800 ms (past it).
    let run = Run {
        duration: Duration::from_millis(600),
        hold: Duration::ZERO,
    };
    let warmup = Duration::from_millis(100);
    let outcome = contend_warmed(vec![client as Arc<dyn Contender>], warmup, run)
        .await
        .expect("run");
    assert_eq!(
        outcome.samples.len(),
        1,
        "grants of the warm-up or past the window were counted"
    );
}

/// One JVM answers every round, at every count asked.
#[test]
fn one_curator_session_answers_every_round() {
    let Some(server) = require(ZkServer::start()) else {
        return;
    };
    let Some(program) = require(Curator::compile().map_err(into_server_error)) else {
        return;
    };
    let path = format!("/curator-bench/session-{:016x}", rand::random::<u64>());
    let mut session = program
        .session(&server.connect_string(), &path)
        .expect("the program starts");
    for round in 0..2 {
        let outcomes = session
            .run((0.1, 0.3), &[1, 2])
            .expect("the round is answered");
        let counts: Vec<usize> = outcomes.iter().map(|(count, _)| *count).collect();
        assert_eq!(
            counts,
            [1, 2],
            "round {round} answered for counts {counts:?}"
        );
        for (count, outcome) in &outcomes {
            assert!(
                !outcome.samples.is_empty(),
                "round {round}: no grant with {count} clients"
            );
            assert_eq!(outcome.overlaps, 0, "round {round}: overlaps");
        }
    }
}

/// The compile error as the test kit reports a missing or failed server, so `require` skips
/// a missing Java (unless servers are required) and fails on anything else.
fn into_server_error(error: compare_bench::BenchError) -> ServerError {
    match error.downcast::<ServerError>() {
        Ok(server_error) => *server_error,
        Err(other) => ServerError::Failed {
            server: "curator",
            reason: other.to_string(),
        },
    }
}
