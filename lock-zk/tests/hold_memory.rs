//! What a held lock costs the client's heap, and how a node deleted among many holds is found:
//! a hold keeps no watch of its own (about 750 bytes in the client, and a watch on the server,
//! for as long as it lasts); its renewal's read finds the node gone. One test, so that nothing
//! else in this binary allocates while the heap is read.

mod support;

use std::alloc::System;
use std::time::Duration;

use cap::Cap;
use lock_core::{AcquireOptions, LockName};
use lock_testkit::holds::hold_many;
use lock_testkit::scaled_ms;
use support::{eventually, lock_nodes};

#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

/// Holds in each of the two batches read.
const HOLDS: usize = 2000;

/// The client heap a hold may take, the engine's share (guard, lease entry, lost signal)
/// included: the goal for a service holding 100,000 locks.
const BYTES_PER_HOLD: f64 = 1024.0;

/// Nodes per read when a session's holds are confirmed together (`lock-zk`'s own figure).
const NODES_PER_READ: usize = 512;

/// Renewals every second: a deleted node is found within about that.
const SESSION_TIMEOUT: Duration = Duration::from_secs(3);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_takes_under_a_kib_and_a_deleted_node_is_found_by_its_renewal() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    // Names of 20-odd bytes, like the benchmark's: the name is kept with the hold, and its
    // node's path (the name, a UUID and a sequence number) too.
    let prefix = format!("hold-memory/{:08x}", rand_suffix());
    let per_hold = heap_per_hold(&url, &prefix).await;
    eprintln!("{HOLDS} more holds take {per_hold:.0} bytes each");
    assert!(
        per_hold <= BYTES_PER_HOLD,
        "{HOLDS} more holds take {per_hold:.0} bytes each"
    );
    one_deleted_node_among_many_is_found(&url, &prefix).await;
}

/// The heap a hold takes: read across a second batch of holds, so that what the session, its
/// connection and the engine allocate once is there before the reading. The session timeout
/// is long enough that no renewal (and its reads in flight) falls within the reading.
async fn heap_per_hold(url: &str, prefix: &str) -> f64 {
    let lock = support::connect(&format!("{url}?session_timeout=60000ms")).await;
    let options = options();
    let first = hold_many(&lock, &format!("{prefix}/first"), HOLDS, &options).await;
    tokio::time::sleep(scaled_ms(300)).await;
    let before = HEAP.allocated();
    let second = hold_many(&lock, &format!("{prefix}/second"), HOLDS, &options).await;
    // Past anything a hold starts after its grant.
    tokio::time::sleep(scaled_ms(300)).await;
    let per_hold = (HEAP.allocated() as f64 - before as f64) / HOLDS as f64;
    for guard in first.into_iter().chain(second) {
        guard.release().await.expect("release");
    }
    per_hold
}

/// A node deleted among more holds than one read carries is found by its hold's next renewal,
/// and only that hold is lost; under a chroot, as the reads must be.
async fn one_deleted_node_among_many_is_found(url: &str, prefix: &str) {
    let url = format!("{url}/hold-memory-chroot");
    let lock = support::connect(&format!(
        "{url}?session_timeout={}ms",
        SESSION_TIMEOUT.as_millis()
    ))
    .await;
    let holds = NODES_PER_READ * 2 + 1;
    let guards = hold_many(&lock, &format!("{prefix}/deleted"), holds, &options()).await;
    let victim = &guards[holds / 2];
    delete_behind_its_back(&url, victim.name()).await;
    eventually(
        SESSION_TIMEOUT,
        "the lost signal of the hold whose node was deleted",
        || victim.is_lost(),
    )
    .await;
    let lost = guards.iter().filter(|guard| guard.is_lost()).count();
    assert_eq!(lost, 1, "{lost} of {holds} holds lost for one node deleted");
    for guard in guards {
        let _ = guard.release().await;
    }
}

fn options() -> AcquireOptions {
    AcquireOptions::builder()
        .wait(scaled_ms(10_000))
        .build()
        .expect("valid options")
}

/// Deletes the lock node of `name` from another session, as an operator would.
async fn delete_behind_its_back(url: &str, name: &LockName) {
    let admin = support::connect(url).await;
    let nodes = lock_nodes(&admin, name).await;
    let node = nodes.first().expect("the held node");
    admin
        .client()
        .await
        .expect("admin client")
        .delete(node, None)
        .await
        .expect("delete the held node");
}

/// Eight hex digits no other run of this test uses.
fn rand_suffix() -> u32 {
    uuid::Uuid::new_v4().as_fields().0
}
