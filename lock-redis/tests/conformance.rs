//! The shared conformance suite against a real single Redis.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{DistributedLock, LockName, Result, ServiceBuilder};
use lock_redis::{RedisLock, redis};
use lock_testkit::ConformanceTarget;

struct RedisTarget {
    url: String,
}

#[async_trait]
impl ConformanceTarget for RedisTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        let lock = RedisLock::builder(&self.url).connect().await?;
        Ok(Arc::new(lock))
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        let lock = RedisLock::builder(&self.url).connect().await?;
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
        let builder = lock_redis::RedisLock::builder(&format!("redis://{addr}"))
            .connect_timeout(timeout)
            .operation_timeout(timeout);
        Some(
            builder
                .connect()
                .await
                .map(|lock| Arc::new(lock) as Arc<dyn DistributedLock>),
        )
    }

    /// The server itself; the stalled-link case reaches it through a proxy with the default
    /// `client_at` (a client of `redis://PROXY`).
    fn server_addr(&self) -> Option<SocketAddr> {
        support::socket_addr(&self.url)
    }

    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }

    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(RedisLock::builder(url).connect().await?))
    }

    async fn lease_left(&self, name: &LockName) -> Option<Duration> {
        let lock = RedisLock::builder(&self.url).connect().await.ok()?;
        let (key, _, _) = lock.keys_for(name);
        let mut raw = support::raw(&self.url).await;
        let left: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .ok()?;
        Some(Duration::from_millis(u64::try_from(left).ok()?))
    }
}

async fn redis_target() -> Option<Arc<dyn ConformanceTarget>> {
    let url = support::redis_url()?;
    Some(Arc::new(RedisTarget { url }))
}

lock_testkit::conformance_tests!(redis_target());
