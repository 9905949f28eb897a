//! The shared conformance suite against a Redis master whose grants a replica must
//! acknowledge (`wait_replicas=1`): every mutex, semaphore and read-write case, with `WAIT`
//! after each grant.

mod support;

use std::sync::{Arc, OnceLock};

use lock_testkit::ConformanceTarget;
use lock_testkit::servers::RedisServer;
use support::target::RedisTarget;

/// The master and its replica, shared by every case of this binary.
static SERVERS: OnceLock<Option<(RedisServer, RedisServer)>> = OnceLock::new();

async fn replicated_target() -> Option<Arc<dyn ConformanceTarget>> {
    let (master, _replica) = SERVERS.get_or_init(support::master_and_replica).as_ref()?;
    // Generous: a healthy replica acknowledges within milliseconds; the bound only matters
    // when it does not, which is the hardening and chaos tests' subject, not this suite's.
    let params = "wait_replicas=1&wait_timeout=2s".to_owned();
    Some(Arc::new(RedisTarget::new(master.url(), params, None)))
}

lock_testkit::conformance_tests!(replicated_target());
