//! A renewal pipeline leaves no buffers behind: the connection's write buffer, which keeps the
//! size of the largest message it wrote, is not grown to a whole batch. One test, so that
//! nothing else in this binary allocates while the heap is read.

use std::alloc::System;

use cap::Cap;
use lock_redis::RedisLock;
use lock_testkit::renewal_memory::heap_across_first_renewal;
use lock_testkit::servers::RedisServer;
use lock_testkit::{require, scaled_ms};

#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

const HOLDS: usize = 4000;

/// Bytes per hold a renewal may leave live: the scheduler's and the gatherer's own
/// bookkeeping, and the connection's buffers for one short pipeline. One pipeline for the
/// 4,000 holds is about 440 KB, which would leave over 100 bytes per hold.
const LEFT_PER_HOLD: f64 = 24.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_batch_leaves_no_buffers_on_the_connection() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let lock = RedisLock::builder(&server.url())
        .connect()
        .await
        .expect("connect");
    let round_trips = || lock.renewal_round_trips();
    let lease = scaled_ms(9000);
    let heap =
        heap_across_first_renewal(&lock, "renewal-memory", HOLDS, lease, &round_trips, || {
            HEAP.allocated()
        })
        .await;
    eprintln!("{heap:?}");
    let growth = heap.growth_per_hold();
    assert!(
        growth < LEFT_PER_HOLD,
        "the first renewal of {HOLDS} holds left {growth:.0} bytes per hold live: {heap:?}"
    );
}
