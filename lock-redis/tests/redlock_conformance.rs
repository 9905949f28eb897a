//! The shared conformance suite against Redlock over three spawned masters.

use lock_core::ServiceBuilder;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{DistributedLock, LockName, Result};
use lock_redis::{RedisLock, Redlock, redis};
use lock_testkit::servers::RedisServer;
use lock_testkit::{ConformanceTarget, require};

static MASTERS: OnceLock<Option<Vec<RedisServer>>> = OnceLock::new();

struct RedlockTarget {
    urls: Vec<String>,
}

#[async_trait]
impl ConformanceTarget for RedlockTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        let lock = Redlock::builder(&self.urls.join(",")).connect().await?;
        Ok(Arc::new(lock))
    }

    /// Deletes the key on every master, as expiry would.
    async fn sever(&self, name: &LockName) -> Result<()> {
        for url in &self.urls {
            let (key, _, _) = RedisLock::builder(url).connect().await?.keys_for(name);
            let mut raw = redis::Client::open(url.as_str())
                .expect("url")
                .get_multiplexed_async_connection()
                .await
                .expect("raw connection");
            let _: i64 = redis::cmd("DEL")
                .arg(&key)
                .query_async(&mut raw)
                .await
                .expect("DEL");
        }
        Ok(())
    }

    /// Three masters at the same unreachable address.
    async fn unreachable_client(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        let url = format!("redis://{addr}");
        let builder = Redlock::builder(&[url.as_str(); 3].join(","))
            .connect_timeout(timeout)
            .operation_timeout(timeout);
        Some(
            builder
                .connect()
                .await
                .map(|lock| Arc::new(lock) as Arc<dyn DistributedLock>),
        )
    }

    /// The first master's address; `client_at` builds a Redlock on that server alone.
    fn server_addr(&self) -> Option<SocketAddr> {
        let url = self.urls.first()?;
        let url = redis::IntoConnectionInfo::into_connection_info(url.as_str()).ok()?;
        match url.addr() {
            redis::ConnectionAddr::Tcp(host, port) => format!("{host}:{port}").parse().ok(),
            _ => None,
        }
    }

    /// A Redlock whose three masters are three databases of the server behind `addr` (the
    /// first master's proxy): a stall there stalls every master, as the case needs.
    async fn client_at(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        let urls: Vec<String> = (1..=3).map(|db| format!("redis://{addr}/{db}")).collect();
        let builder = Redlock::builder(&urls.join(","))
            .connect_timeout(timeout)
            .operation_timeout(timeout);
        Some(
            builder
                .connect()
                .await
                .map(|lock| Arc::new(lock) as Arc<dyn DistributedLock>),
        )
    }

    fn url(&self) -> Option<String> {
        Some(self.urls.join(","))
    }

    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(Redlock::builder(url).connect().await?))
    }
}

async fn redlock_target() -> Option<Arc<dyn ConformanceTarget>> {
    let masters = MASTERS.get_or_init(|| (0..3).map(|_| require(RedisServer::start())).collect());
    let urls = masters.as_ref()?.iter().map(RedisServer::url).collect();
    Some(Arc::new(RedlockTarget { urls }))
}

lock_testkit::conformance_tests!(redlock_target());
