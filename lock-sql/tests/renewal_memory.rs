//! A renewal batch leaves no buffers behind: the pooled connection that carried one statement
//! for thousands of holds gives back the room it grew for it. One test, so that nothing else in
//! this binary allocates while the heap is read.

use std::alloc::System;

use cap::Cap;
use lock_sql::SqlLock;
use lock_testkit::renewal_memory::heap_across_first_renewal;
use lock_testkit::servers::{MariaDbServer, PostgresServer};
use lock_testkit::{require, scaled_ms};

#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

const HOLDS: usize = 2000;

/// Bytes per hold a renewal may leave live: the scheduler's and the gatherer's own
/// bookkeeping. A batch's statement of 2,000 holds is about 130 KB on PostgreSQL and 150 KB on
/// MySQL, so a connection keeping its buffers would leave 65 bytes per hold or more.
const LEFT_PER_HOLD: f64 = 24.0;

async fn growth_per_hold(url: &str) -> f64 {
    let lock = SqlLock::builder(url).connect().await.expect("connect");
    let statements = || lock.renewal_statements().unwrap_or_default();
    let lease = scaled_ms(9000);
    let heap =
        heap_across_first_renewal(&lock, "renewal-memory", HOLDS, lease, &statements, || {
            HEAP.allocated()
        })
        .await;
    eprintln!("{url}: {heap:?}");
    heap.growth_per_hold()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_batch_leaves_no_buffers_on_its_connection() {
    let (Some(postgres), Some(mariadb)) = (
        require(PostgresServer::start()),
        require(MariaDbServer::start()),
    ) else {
        return;
    };
    for url in [postgres.url(), mariadb.url()] {
        let growth = growth_per_hold(&url).await;
        assert!(
            growth < LEFT_PER_HOLD,
            "the first renewal of {HOLDS} holds left {growth:.0} bytes per hold live on {url}"
        );
    }
}
