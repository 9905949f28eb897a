//! The hand-written Redis lock most projects start with: `SET key token NX PX ttl`, retried at a
//! fixed interval while held, and a Lua compare-and-delete release (`EVALSHA`).
//!
//! Fenced ([`RedisPollLock::connect_fenced`]), the least Redis lock that hands out a fencing
//! token: the `SET` moves into one script that also counts the fence when it set the key
//! (`fenced_acquire.lua`), since a fence taken apart from the grant could go to a try that then
//! lost; the release is the same.

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
    /// The acquire script and the fence counter's key, when fenced.
    fenced: Option<(Script, String)>,
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
        Self::open(url, key, interval, false).await
    }

    /// Connects to `url` for the fenced lock `key`, polling every `interval` while it is held.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect_fenced(url: &str, key: &str, interval: Duration) -> BenchResult<Self> {
        Self::open(url, key, interval, true).await
    }

    async fn open(url: &str, key: &str, interval: Duration, fenced: bool) -> BenchResult<Self> {
        let fenced = fenced.then(|| {
            let acquire = Script::new(include_str!("fenced_acquire.lua"));
            (acquire, format!("{key}:fence"))
        });
        let connection = redis::Client::open(url)?
            .get_multiplexed_async_connection()
            .await?;
        Ok(Self {
            connection,
            key: key.to_owned(),
            interval,
            lease: Duration::from_secs(30),
            release: Script::new(include_str!("release.lua")),
            fenced,
        })
    }

    /// One `SET NX PX` attempt (fenced: one acquire script); `Some(token)` when it was granted.
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
        let lease_ms = self.lease.as_millis() as u64;
        if let Some((acquire, fence)) = &self.fenced {
            let fence: u64 = acquire
                .key(&self.key)
                .key(fence)
                .arg(&token)
                .arg(lease_ms)
                .invoke_async(&mut connection)
                .await?;
            return Ok((fence > 0).then_some(token));
        }
        let set: Option<String> = redis::cmd("SET")
            .arg(&self.key)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(lease_ms)
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
