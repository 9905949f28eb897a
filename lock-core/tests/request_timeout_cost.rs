//! What `lock_core::backend::timeout` costs requests that end in time: no wake-up of the
//! keeper thread per request, and nothing left in its table. A test binary of its own, as the
//! keeper's counts are the process's.

use std::time::Duration;

use lock_core::backend::{timeout, timeout_keeper_stats};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_of_one_limit_wake_the_keeper_at_most_once_per_limit() {
    let (woken_before, _) = timeout_keeper_stats();
    let limit = Duration::from_secs(30);
    for round in 0..200_u32 {
        let request = async move {
            tokio::time::sleep(Duration::from_micros(200)).await;
            round
        };
        assert_eq!(timeout(limit, request).await, Ok(round));
    }
    // A request dropped while it waits takes its deadline out too.
    let dropped = timeout(limit, std::future::pending::<()>());
    assert!(
        tokio::time::timeout(Duration::from_millis(20), dropped)
            .await
            .is_err()
    );
    let (woken, pending) = timeout_keeper_stats();
    assert_eq!(pending, 0, "deadlines left in the table");
    // The first request armed the keeper for its deadline; every later one is due after it.
    // (A second wake-up is allowed for a request that set it before the thread first ran.)
    let woken = woken - woken_before;
    assert!(
        woken <= 2,
        "the keeper was woken {woken} times for 201 requests"
    );
}
