//! The hand-written Redis lock most projects start with: `SET key token NX PX ttl`, retried at a
//! fixed interval while held, and a Lua compare-and-delete release (`EVALSHA`).

use std::time::Duration;

use async_trait::async_trait;
use lock_redis::redis::{self, Script, aio::MultiplexedConnection};

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One client (its own connection) of the polling lock on one key.
#[derive(Clone)]
pub struct RedisPollLock {
    connection: MultiplexedConnection,
    key: String,
    interval: Duration,
    lease: Duration,
    release: Script,
}

impl std::fmt::Debug for RedisPollLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisPollLock")
            .field("key", &self.key)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl RedisPollLock {
    /// Connects to `url` for the lock `key`, polling every `interval` while it is held.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect(url: &str, key: &str, interval: Duration) -> BenchResult<Self> {
        let connection = redis::Client::open(url)?
            .get_multiplexed_async_connection()
            .await?;
        Ok(Self {
            connection,
            key: key.to_owned(),
            interval,
            lease: Duration::from_secs(30),
            release: Script::new(include_str!("release.lua")),
        })
    }

    /// One `SET NX PX` attempt; `Some(token)` when it was granted.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped after the `SET` was sent, it may leave the key set until its lease ends.
    ///
    /// # Errors
    ///
    /// The command's error.
    pub async fn try_once(&self) -> BenchResult<Option<String>> {
        let token = super::token();
        let mut connection = self.connection.clone();
        let set: Option<String> = redis::cmd("SET")
            .arg(&self.key)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(self.lease.as_millis() as u64)
            .query_async(&mut connection)
            .await?;
        Ok(set.map(|_| token))
    }
}

struct PollHeld {
    lock: RedisPollLock,
    token: String,
}

#[async_trait]
impl Contender for RedisPollLock {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        loop {
            if let Some(token) = self.try_once().await? {
                return Ok(Box::new(PollHeld {
                    lock: self.clone(),
                    token,
                }));
            }
            tokio::time::sleep(self.interval).await;
        }
    }
}

#[async_trait]
impl Held for PollHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.lock.connection.clone();
        let _: i64 = self
            .lock
            .release
            .key(&self.lock.key)
            .arg(&self.token)
            .invoke_async(&mut connection)
            .await?;
        Ok(())
    }
}
