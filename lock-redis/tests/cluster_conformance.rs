//! The shared conformance suite on a Redis Cluster (three primaries, one replica each): every
//! lock's keys live in one slot, commands follow the slot to its master, and waiters wake
//! through sharded pub/sub. Run twice: plain, and with `WAIT` for the shard's replica.

mod support;

use std::sync::{Arc, OnceLock};

use lock_testkit::servers::external_url;
use lock_testkit::{ConformanceTarget, require};
use support::target::RedisTarget;

/// The cluster's URL (`LOCK_TEST_REDIS_CLUSTER_URL`, or a cluster spawned for this binary).
fn cluster_url() -> Option<String> {
    static URL: OnceLock<Option<String>> = OnceLock::new();
    static OWNED: OnceLock<Option<lock_testkit::servers::RedisCluster>> = OnceLock::new();
    URL.get_or_init(|| {
        external_url("REDIS_CLUSTER").or_else(|| {
            OWNED
                .get_or_init(|| require(lock_testkit::servers::RedisCluster::start(3, 1)))
                .as_ref()
                .map(lock_testkit::servers::RedisCluster::url)
        })
    })
    .clone()
}

async fn cluster(params: &str) -> Option<Arc<dyn ConformanceTarget>> {
    Some(Arc::new(RedisTarget::new(
        cluster_url()?,
        params.to_owned(),
        None,
    )))
}

mod plain {
    use super::*;

    lock_testkit::conformance_tests!(cluster(""));
}

mod replicated {
    use super::*;

    lock_testkit::conformance_tests!(cluster("wait_replicas=1&wait_timeout=2s"));
}
