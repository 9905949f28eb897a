//! The shared conformance suite against a real standalone ZooKeeper.

mod support;

use std::sync::Arc;
use std::time::Duration;

use lock_testkit::ConformanceTarget;

async fn zookeeper() -> Option<Arc<dyn ConformanceTarget>> {
    let url = support::server_url(Duration::from_millis(2000))?;
    Some(Arc::new(support::ZkTarget { url }))
}

lock_testkit::conformance_tests!(zookeeper());
