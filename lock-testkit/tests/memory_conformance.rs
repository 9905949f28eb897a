//! The conformance suite against the in-memory backend.

use std::sync::Arc;

use lock_testkit::{ConformanceTarget, MemoryTarget};

async fn memory() -> Option<Arc<dyn ConformanceTarget>> {
    Some(Arc::new(MemoryTarget::default()))
}

lock_testkit::conformance_tests!(memory());
