//! The conformance target of one Redis master, optionally with the parameters of a service
//! that waits for replicas.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{DistributedLock, LockName, Result, ServiceBuilder};
use lock_redis::{RedisLock, redis};
use lock_testkit::ConformanceTarget;
use tokio::sync::OnceCell;

/// A master at `url`; every client the suite makes also carries `params` (a URL query such as
/// `wait_replicas=1&wait_timeout=2s`, or empty). Commands behind the lock's back go to
/// `admin` when set (the plaintext port of a server whose `url` is `rediss://`), else to `url`.
pub struct RedisTarget {
    pub url: String,
    pub params: String,
    pub admin: Option<String>,
    /// A client (for key names) and a raw connection that read leases, made on first use: a
    /// case may read a lease a thousand times, and connecting is most of what a read costs
    /// (a TLS handshake, a cluster's or Sentinel's discovery).
    lease_reader: OnceCell<(RedisLock, super::Raw)>,
}

impl RedisTarget {
    pub fn new(url: String, params: String, admin: Option<String>) -> Self {
        Self {
            url,
            params,
            admin,
            lease_reader: OnceCell::new(),
        }
    }

    /// `url` with the target's parameters.
    fn with_params(&self, url: &str) -> String {
        if self.params.is_empty() {
            return url.to_owned();
        }
        let separator = if url.contains('?') { '&' } else { '?' };
        format!("{url}{separator}{}", self.params)
    }

    /// A plain connection for commands issued behind the lock's back.
    async fn raw(&self) -> super::Raw {
        super::raw(self.admin.as_deref().unwrap_or(&self.url)).await
    }

    async fn connect(&self) -> Result<RedisLock> {
        RedisLock::builder(&self.with_params(&self.url))
            .connect()
            .await
    }
}

#[async_trait]
impl ConformanceTarget for RedisTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(self.connect().await?))
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        let (key, _, _) = self.connect().await?.keys_for(name);
        let mut raw = self.raw().await;
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
        // The target's URL with `addr` for its hosts: same scheme, same path (a Sentinel
        // URL's master name).
        let (scheme, rest) = self.url.split_once("://").unwrap_or(("redis", ""));
        let path = rest.find(['/', '?']).map_or("", |at| &rest[at..]);
        let url = format!("{scheme}://{addr}{path}");
        let builder = RedisLock::builder(&self.with_params(&url))
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
    /// `client_at` (a client of `redis://PROXY` with the target's parameters).
    fn server_addr(&self) -> Option<SocketAddr> {
        super::socket_addr(&self.url)
    }

    fn url(&self) -> Option<String> {
        Some(self.with_params(&self.url))
    }

    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(RedisLock::builder(url).connect().await?))
    }

    async fn lease_left(&self, name: &LockName) -> Option<Duration> {
        let reader = self.lease_reader.get_or_try_init(|| async {
            let lock = self.connect().await?;
            Ok::<_, lock_core::Error>((lock, self.raw().await))
        });
        let (lock, raw) = reader.await.ok()?;
        let (key, _, _) = lock.keys_for(name);
        let mut raw = raw.clone();
        let left: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .ok()?;
        Some(Duration::from_millis(u64::try_from(left).ok()?))
    }
}
