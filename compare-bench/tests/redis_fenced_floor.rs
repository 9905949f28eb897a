//! The least fenced Redis lock on a real Redis: a grant counts the fence, a refused try counts
//! nothing, and the release frees the key for the next grant, which counts one more.

use compare_bench::contend::Contender;
use compare_bench::peers::redis_poll::RedisPollLock;
use lock_redis::redis::{self, AsyncCommands};
use lock_testkit::require;
use lock_testkit::servers::RedisServer;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_grant_counts_the_fence() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let url = server.url();
    let poll = Duration::from_millis(1);
    let first = RedisPollLock::connect_fenced(&url, "fenced/key", poll)
        .await
        .expect("first");
    let second = RedisPollLock::connect_fenced(&url, "fenced/key", poll)
        .await
        .expect("second");
    let probe = redis::Client::open(url.as_str())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("probe");
    let fence = || {
        let mut probe = probe.clone();
        async move {
            let fence: Option<u64> = probe.get("fenced/key:fence").await.expect("read fence");
            fence
        }
    };
    let held = first.acquire().await.expect("uncontended grant");
    assert_eq!(fence().await, Some(1), "the grant counted no fence");
    for _ in 0..3 {
        assert_eq!(
            second.try_once().await.expect("try"),
            None,
            "granted while held"
        );
    }
    assert_eq!(fence().await, Some(1), "a refused try counted the fence");
    held.release().await.expect("release");
    let key: Option<String> = probe.clone().get("fenced/key").await.expect("read key");
    assert_eq!(key, None, "the release left the key");
    let held = second.acquire().await.expect("grant after the release");
    assert_eq!(fence().await, Some(2), "the next grant counted no fence");
    held.release().await.expect("last release");
}
