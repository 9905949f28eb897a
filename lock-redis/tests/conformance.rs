//! The shared conformance suite against a real single Redis.

mod support;

use std::sync::Arc;

use lock_testkit::ConformanceTarget;
use support::target::RedisTarget;

async fn redis_target() -> Option<Arc<dyn ConformanceTarget>> {
    let url = support::redis_url()?;
    let params = String::new();
    Some(Arc::new(RedisTarget::new(url, params, None)))
}

lock_testkit::conformance_tests!(redis_target());
