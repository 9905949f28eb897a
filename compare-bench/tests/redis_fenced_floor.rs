//! The least fenced Redis locks on a real Redis: a grant counts the fence in the step that sets
//! the key, a refused try counts nothing (script) or a number no grant gets (transaction), and
//! the release frees the key for the next grant, which counts one more.

use std::time::Duration;

use compare_bench::contend::Contender;
use compare_bench::peers::redis_poll::{Fencing, RedisPollLock};
use lock_redis::redis::{self, AsyncCommands};
use lock_testkit::require;
use lock_testkit::servers::RedisServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_grant_counts_the_fence_in_its_own_step() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let probe = redis::Client::open(url.as_str())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("probe");
    // The counter after the first grant, after three refused tries, after the next grant.
    for (way, fencing, counts) in [
        ("script", Fencing::script(), [1, 1, 2]),
        ("transaction", Fencing::Transaction, [1, 4, 5]),
    ] {
        let key = format!("fenced/{way}");
        let poll = Duration::from_millis(1);
        let open = || RedisPollLock::connect_fenced(&url, &key, poll, fencing.clone());
        let (first, second) = (open().await.expect("first"), open().await.expect("second"));
        let fence = || {
            let (mut probe, counter) = (probe.clone(), format!("{key}:fence"));
            async move {
                let fence: Option<u64> = probe.get(counter).await.expect("read fence");
                fence
            }
        };
        let held = first.acquire().await.expect("uncontended grant");
        assert_eq!(fence().await, Some(counts[0]), "{way}: the grant");
        for _ in 0..3 {
            let tried = second.try_once().await.expect("try");
            assert_eq!(tried, None, "{way}: granted while held");
        }
        assert_eq!(fence().await, Some(counts[1]), "{way}: the refused tries");
        held.release().await.expect("release");
        let left: Option<String> = probe.clone().get(&key).await.expect("read key");
        assert_eq!(left, None, "{way}: the release left the key");
        let held = second.acquire().await.expect("grant after the release");
        assert_eq!(fence().await, Some(counts[2]), "{way}: the next grant");
        held.release().await.expect("last release");
    }
}

/// The least FIFO-fenced lock on a real Redis: a grant's fence is floored at the server clock
/// (so it is far above a counter of one grant), a waiter queue refuses every try while it
/// exists, even on a free lock, and counts nothing, and the release frees the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fifo_floor_keeps_arrival_order_and_floors_the_fence_at_the_clock() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let mut probe = redis::Client::open(url.as_str())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("probe");
    let key = "fenced/clocked";
    let (counter, queue) = (format!("{key}:fence"), format!("{key}:queue"));
    let poll = Duration::from_millis(1);
    let lock = RedisPollLock::connect_fenced(&url, key, poll, Fencing::clocked())
        .await
        .expect("connect");
    let clock_us = |mut probe: redis::aio::MultiplexedConnection| async move {
        let (seconds, micros): (u64, u64) = redis::cmd("TIME")
            .query_async(&mut probe)
            .await
            .expect("TIME");
        seconds * 1_000_000 + micros
    };
    let before = clock_us(probe.clone()).await;
    let held = lock.acquire().await.expect("uncontended grant");
    let first: u64 = probe.get(&counter).await.expect("read fence");
    assert!(
        first >= before && first <= clock_us(probe.clone()).await,
        "fence {first} not the server clock (from {before})"
    );
    held.release().await.expect("release");
    let left: Option<String> = probe.get(key).await.expect("read key");
    assert_eq!(left, None, "the release left the key");
    let _: () = probe
        .zadd(&queue, "earlier-waiter", 1)
        .await
        .expect("queue");
    for _ in 0..3 {
        assert_eq!(
            lock.try_once().await.expect("try"),
            None,
            "granted past a queue"
        );
    }
    let unchanged: u64 = probe.get(&counter).await.expect("read fence");
    assert_eq!(unchanged, first, "a refused try counted a fence");
    let _: () = probe.del(&queue).await.expect("empty the queue");
    let held = lock.acquire().await.expect("grant once the queue is gone");
    let next: u64 = probe.get(&counter).await.expect("read fence");
    assert!(next > first, "fence {next} not above {first}");
    held.release().await.expect("last release");
}
