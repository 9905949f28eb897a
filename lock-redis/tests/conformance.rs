//! The shared conformance suite against a real single Redis.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{DistributedLock, LockName, Result};
use lock_redis::{RedisLock, RedisLockBuilder, redis};
use lock_testkit::ConformanceTarget;

struct RedisTarget {
    url: String,
}

#[async_trait]
impl ConformanceTarget for RedisTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        lock_redis::connect(&self.url).await
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        let lock = RedisLock::builder(&self.url).connect_single().await?;
        let (key, _, _) = lock.keys_for(name);
        let mut raw = support::raw(&self.url).await;
        let _: i64 = redis::cmd("DEL")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .expect("DEL");
        Ok(())
    }

    async fn unreachable_client(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        let builder = RedisLockBuilder::new(&format!("redis://{addr}"))
            .connect_timeout(timeout)
            .command_timeout(timeout);
        Some(builder.connect().await)
    }
}

async fn redis_target() -> Option<Arc<dyn ConformanceTarget>> {
    let url = support::redis_url()?;
    Some(Arc::new(RedisTarget { url }))
}

lock_testkit::conformance_tests!(redis_target());
