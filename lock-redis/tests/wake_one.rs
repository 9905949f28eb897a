//! A release wakes the first queued waiter alone: its message reaches one connection however
//! many wait, the waiters behind the first neither wake nor try, a service's waits share one
//! subscription (its inbox), made on its first wait and kept, and a waiter tries once (the
//! release before it grants it the lock).

mod support;

use std::time::Duration;

use lock_core::{DistributedLockExt, LockName};
use lock_redis::{RedisLock, redis};
use lock_testkit::scaled_ms;
use lock_testkit::servers::RedisServer;
use support::commandstats::command_calls;
use tokio::time::Instant;

const WAITERS: usize = 8;

fn name(case: &str) -> LockName {
    LockName::new(format!("wake-one/{case}/{:x}", rand::random::<u64>())).expect("name")
}

/// Every channel under the default prefix with its subscriber count.
async fn channels(conn: &mut redis::aio::MultiplexedConnection) -> Vec<(String, u64)> {
    let names: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg("{distlock:*")
        .query_async(conn)
        .await
        .expect("PUBSUB CHANNELS");
    if names.is_empty() {
        return Vec::new();
    }
    redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(&names)
        .query_async(conn)
        .await
        .expect("PUBSUB NUMSUB")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_is_heard_by_the_first_waiter_alone() {
    let Some(server) = lock_testkit::require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let name = name("heard");
    let client = redis::Client::open(url.as_str()).expect("client");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
    let holder = RedisLock::builder(&url).connect().await.expect("connect");
    let held = holder.try_acquire(&name).await.expect("try").expect("free");
    let mut waiters = Vec::new();
    for _ in 0..WAITERS {
        let lock = RedisLock::builder(&url).connect().await.expect("connect");
        let name = name.clone();
        waiters.push(tokio::spawn(async move {
            let guard = lock
                .acquire_timeout(&name, scaled_ms(20_000))
                .await
                .expect("granted within the wait");
            guard.release().await.expect("release");
        }));
    }
    // Every waiter queued and listening.
    let deadline = Instant::now() + scaled_ms(10_000);
    let listening = loop {
        let found = channels(&mut conn).await;
        let total: u64 = found.iter().map(|(_, count)| count).sum();
        if total == WAITERS as u64 || Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let total: u64 = listening.iter().map(|(_, count)| count).sum();
    assert_eq!(total, WAITERS as u64, "waiters listening: {listening:?}");
    let busiest = listening.iter().map(|(_, count)| *count).max();
    assert_eq!(
        busiest,
        Some(1),
        "a release's channel reaches {busiest:?} connections among {WAITERS} waiters: {listening:?}"
    );
    // The grants still go round, each woken by its predecessor's release.
    held.release().await.expect("release");
    for waiter in waiters {
        waiter.await.expect("waiter");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_services_waits_share_one_subscription_and_try_once() {
    const ROUNDS: u64 = 3;
    let Some(server) = lock_testkit::require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let holder = RedisLock::builder(&url).connect().await.expect("connect");
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    // The scripts loaded, the service's inbox subscribed: its first wait.
    let warm = name("warm");
    let held = holder.try_acquire(&warm).await.expect("try").expect("free");
    let waiting = {
        let (lock, warm) = (lock.clone(), warm.clone());
        tokio::spawn(async move { lock.acquire_timeout(&warm, scaled_ms(20_000)).await })
    };
    tokio::time::sleep(scaled_ms(200)).await;
    held.release().await.expect("release");
    let guard = waiting.await.expect("task").expect("acquire");
    guard.release().await.expect("release");
    let before = command_calls(&server);
    for _ in 0..ROUNDS {
        let round = name("rounds");
        let held = holder
            .try_acquire(&round)
            .await
            .expect("try")
            .expect("free");
        let waiters: Vec<_> = (0..WAITERS)
            .map(|_| {
                let (lock, round) = (lock.clone(), round.clone());
                tokio::spawn(async move {
                    let guard = lock
                        .acquire_timeout(&round, scaled_ms(20_000))
                        .await
                        .expect("granted within the wait");
                    guard.release().await.expect("release");
                })
            })
            .collect();
        tokio::time::sleep(scaled_ms(200)).await;
        held.release().await.expect("release");
        for waiter in waiters {
            waiter.await.expect("waiter");
        }
    }
    let after = command_calls(&server);
    let delta = |command: &str| {
        after.get(command).copied().unwrap_or(0) - before.get(command).copied().unwrap_or(0)
    };
    let subscribes = delta("subscribe") + delta("unsubscribe");
    assert_eq!(
        subscribes,
        0,
        "{} waits of one service (un)subscribed {subscribes} times",
        ROUNDS * WAITERS as u64
    );
    // Per round: the holder's try and release; per waiter: its try and its release (the
    // release before it grants it the lock).
    let scripts = delta("evalsha");
    let most = ROUNDS * (2 + 2 * WAITERS as u64);
    assert!(
        scripts <= most,
        "{} waits ran {scripts} scripts (at most {most})",
        ROUNDS * WAITERS as u64
    );
}
