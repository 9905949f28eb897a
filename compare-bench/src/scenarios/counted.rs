//! A lock service with, where its backend keeps the count, the round trips its renewals have
//! taken: one per pipeline of renew scripts (Redis), one per statement (PostgreSQL, MySQL).

use std::sync::Arc;

use lock_core::DistributedLock;
use lock_redis::RedisLock;
use lock_sql::SqlLock;

use crate::BenchResult;

/// Reads a service's renewal round trips so far.
type RoundTrips = Box<dyn Fn() -> u64 + Send + Sync>;

/// A service and its renewal round-trip counter.
pub struct Counted {
    /// The service, as every scenario drives it.
    pub lock: Arc<dyn DistributedLock>,
    round_trips: Option<RoundTrips>,
}

impl std::fmt::Debug for Counted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counted")
            .field("backend", &self.lock.backend())
            .field("round_trips", &self.round_trips())
            .finish()
    }
}

impl Counted {
    /// Connects to `url` of `backend`: as `distlock::connect` would, keeping the counter of the
    /// backends that count (ZooKeeper renews nothing: its session keeps the holds).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is held until it returns.
    ///
    /// # Errors
    ///
    /// The backend's connect error.
    pub async fn connect(backend: &str, url: &str) -> BenchResult<Self> {
        let (lock, round_trips): (Arc<dyn DistributedLock>, Option<RoundTrips>) = match backend {
            "redis" => {
                let lock = Arc::new(RedisLock::builder(url).connect().await?);
                let counted = Arc::clone(&lock);
                (lock, Some(Box::new(move || counted.renewal_round_trips())))
            }
            "postgres" | "mysql" => {
                let lock = Arc::new(SqlLock::builder(url).connect().await?);
                let counted = Arc::clone(&lock);
                let count = move || counted.renewal_statements().unwrap_or_default();
                (lock, Some(Box::new(count)))
            }
            _ => (distlock::connect(url).await?, None),
        };
        Ok(Self { lock, round_trips })
    }

    /// The renewal round trips so far; `None` where the backend does not count them.
    pub fn round_trips(&self) -> Option<u64> {
        self.round_trips.as_ref().map(|count| count())
    }
}
