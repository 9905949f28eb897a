//! The hand-written Redis semaphore most guides show: a sorted set of holder tokens scored by
//! their acquisition time; one script drops holders older than the timeout and takes a place if
//! fewer than the limit hold; `ZREM` releases. Polled at a fixed interval while full; no
//! fencing, no renewal, no queue.

use std::time::Duration;

use async_trait::async_trait;
use lock_redis::redis::{self, Script, aio::MultiplexedConnection};

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One client (its own connection) of the semaphore on one key.
#[derive(Clone)]
pub struct ZsetSemaphore {
    connection: MultiplexedConnection,
    key: String,
    limit: u32,
    interval: Duration,
    timeout: Duration,
    acquire: Script,
}

impl std::fmt::Debug for ZsetSemaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZsetSemaphore")
            .field("key", &self.key)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl ZsetSemaphore {
    /// Connects to `url` for the semaphore `key` of `limit` places, polling every `interval`
    /// while it is full.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect(
        url: &str,
        key: &str,
        limit: u32,
        interval: Duration,
    ) -> BenchResult<Self> {
        let connection = redis::Client::open(url)?
            .get_multiplexed_async_connection()
            .await?;
        Ok(Self {
            connection,
            key: key.to_owned(),
            limit,
            interval,
            timeout: Duration::from_secs(30),
            acquire: Script::new(include_str!("zset_acquire.lua")),
        })
    }

    /// One try; `Some(token)` when a place was taken.
    async fn try_once(&self) -> BenchResult<Option<String>> {
        let token = super::token();
        let mut connection = self.connection.clone();
        let granted: i64 = self
            .acquire
            .key(&self.key)
            .arg(&token)
            .arg(self.limit)
            .arg(self.timeout.as_millis() as u64)
            .invoke_async(&mut connection)
            .await?;
        Ok((granted == 1).then_some(token))
    }
}

struct ZsetHeld {
    semaphore: ZsetSemaphore,
    token: String,
}

#[async_trait]
impl Contender for ZsetSemaphore {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        loop {
            if let Some(token) = self.try_once().await? {
                return Ok(Box::new(ZsetHeld {
                    semaphore: self.clone(),
                    token,
                }));
            }
            tokio::time::sleep(self.interval).await;
        }
    }
}

#[async_trait]
impl Held for ZsetHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.semaphore.connection.clone();
        let _: i64 = redis::cmd("ZREM")
            .arg(&self.semaphore.key)
            .arg(&self.token)
            .query_async(&mut connection)
            .await?;
        Ok(())
    }

    fn exclusive(&self) -> bool {
        false
    }
}
