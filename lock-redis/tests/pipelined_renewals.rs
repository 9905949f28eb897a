//! Renewal traffic: the holds of one service renew in pipelines, not one round trip each.

use lock_core::{AcquireOptions, DistributedLockExt, LockGuard, LockName};
use lock_redis::RedisLock;
use lock_testkit::servers::RedisServer;
use lock_testkit::{require, scaled_ms};

const HOLDS: usize = 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_of_one_service_renew_in_pipelines() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let lock = RedisLock::builder(&server.url())
        .connect()
        .await
        .expect("connect");
    let lease = scaled_ms(900);
    let options = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .lease(lease)
        .auto_renew(true)
        .build()
        .expect("valid options");
    // Taken together, so their renewals fall due within a few milliseconds of each other.
    let acquiring = (0..HOLDS).map(|hold| {
        let (lock, options) = (&lock, &options);
        async move {
            let name = LockName::new(format!("pipelined/{hold}")).expect("name");
            lock.acquire_with_options(&name, options).await
        }
    });
    let guards: Vec<LockGuard> = futures_util::future::join_all(acquiring)
        .await
        .into_iter()
        .map(|guard| guard.expect("acquire").expect("free name"))
        .collect();
    // Three renewal periods (a third of the lease each): a round trip per renewal would be
    // 180.
    let before = lock.renewal_round_trips();
    tokio::time::sleep(lease).await;
    let round_trips = lock.renewal_round_trips() - before;
    eprintln!("{round_trips} round trips for {HOLDS} holds over three renewal periods");
    assert!(
        guards.iter().all(|guard| !guard.is_lost()),
        "a hold was lost"
    );
    assert!(
        round_trips >= 2 && round_trips < HOLDS as u64,
        "{round_trips} round trips for {HOLDS} holds over three renewal periods"
    );
    for guard in guards {
        guard.release().await.expect("release");
    }
}
