//! The seeds' failover hazard, reproduced: replication to the replica is cut, the master grants
//! a lock and dies, the replica is promoted and grants the lock again. With `wait_for_replicas(1, ..)` the first acquire
//! fails instead of handing out an unreplicated lock.

mod support;

use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind, LockName};
use lock_redis::{RedisLock, redis};

fn lock_name() -> LockName {
    LockName::new(format!("failover/{:x}", rand::random::<u64>())).expect("valid name")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoted_replica_grants_an_unreplicated_lock_again() {
    let Some((mut master, mut replica)) = support::master_and_replica() else {
        return;
    };
    let name = lock_name();
    let first = lock_redis::RedisLock::builder(&master.url())
        .connect()
        .await
        .expect("connect master");
    // Cut replication: stop the replica and drop the master's link to it, so nothing written
    // from now on reaches it (bytes already in its socket buffer would, after SIGCONT).
    replica.process().pause().expect("SIGSTOP replica");
    let killed = master
        .command("CLIENT KILL TYPE replica")
        .expect("CLIENT KILL");
    assert!(killed.starts_with(":1"), "replica link not cut: {killed}");
    let held = first
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free lock");
    master.process().kill();
    replica.process().resume().expect("SIGCONT replica");
    let promoted = replica
        .command("REPLICAOF NO ONE")
        .expect("REPLICAOF NO ONE");
    assert!(promoted.starts_with("+OK"), "{promoted}");
    let second = lock_redis::RedisLock::builder(&replica.url())
        .connect()
        .await
        .expect("connect promoted replica");
    let again = second
        .try_acquire(&name)
        .await
        .expect("try on the promoted replica");
    assert!(
        again.is_some(),
        "the promoted replica refused the lock: the hazard was not reproduced"
    );
    // Two guards for one name: the first still believes it holds the lock.
    assert!(
        !held.is_lost(),
        "the first holder cannot know it was replaced"
    );
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_one_replica_fails_the_acquire_instead() {
    let Some((master, mut replica)) = support::master_and_replica() else {
        return;
    };
    let name = lock_name();
    let waiting = RedisLock::builder(&master.url())
        .wait_for_replicas(1, Duration::from_millis(800))
        .connect()
        .await
        .expect("connect master");
    // With the replica in sync, WAIT is acknowledged and the grant goes through. (800 ms is
    // longer than the client library's default 500 ms response timeout: WAIT must outlast it.)
    let guard = waiting
        .try_acquire(&name)
        .await
        .expect("replicated acquire")
        .expect("free lock");
    guard.release().await.expect("release");

    replica.process().pause().expect("SIGSTOP replica");
    let error = waiting
        .try_acquire(&name)
        .await
        .expect_err("an unreplicated lock was granted");
    replica.process().resume().expect("SIGCONT replica");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(
        error.to_string().contains("0 of the 1 required replicas"),
        "unclear error: {error}"
    );
    let (key, _, _) = waiting.keys_for(&name);
    let mut raw = redis::Client::open(master.url())
        .expect("url")
        .get_multiplexed_async_connection()
        .await
        .expect("raw connection");
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .expect("EXISTS");
    assert_eq!(
        exists, 0,
        "the failed acquire left the lock held on the master"
    );
}
