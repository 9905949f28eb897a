//! The hand-written Redis lock most projects start with: `SET key token NX PX ttl`, retried at a
//! fixed interval while held, and a Lua compare-and-delete release (`EVALSHA`).
//!
//! Fenced ([`RedisPollLock::connect_fenced`]), the least Redis locks that hand out a fencing
//! token, in the two ways a grant and its fence can be one step on the server: one script that
//! sets the key if absent and only then counts the fence (`fenced_acquire.lua`), or the same
//! `SET` and an `INCR` of the fence in one `MULTI`/`EXEC`. The transaction counts a fence on
//! every try, granted or not: tokens then skip numbers, but each grant's is still above every
//! earlier grant's. The release is the same.
//!
//! The least FIFO lock that fences the way distlock does ([`Fencing::Clocked`]) is one script
//! too: it refuses while a waiter queue exists, and floors the fence at the server clock so
//! that fences keep rising across a failover that lost the counter's last grants. Its release
//! also reports whether a queue exists, which a FIFO release must learn to wake its head.

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
    /// How a grant counts its fence, and the fence counter's key, when fenced.
    fenced: Option<(Fencing, String)>,
    /// The waiter queue's key, which the FIFO lock's scripts read ([`Fencing::Clocked`]); as
    /// a script key, `None` adds none.
    queue: Option<String>,
}

/// How a fenced lock counts a grant's fence in the step that grants it.
#[derive(Clone, Debug)]
pub enum Fencing {
    /// One script: `SET NX PX`, then `INCR` only when it set the key.
    Script(Script),
    /// `SET NX PX` and `INCR` in one `MULTI`/`EXEC`.
    Transaction,
    /// One script that refuses while a waiter queue exists, and takes a fence floored at the
    /// server clock only when it set the key.
    Clocked(Script),
}

impl Fencing {
    /// The script way.
    pub fn script() -> Self {
        Fencing::Script(Script::new(include_str!("fenced_acquire.lua")))
    }

    /// The FIFO, clock-floored way.
    pub fn clocked() -> Self {
        Fencing::Clocked(Script::new(include_str!("fifo_fenced_acquire.lua")))
    }
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
        Self::open(url, key, interval, None).await
    }

    /// Connects to `url` for the lock `key` fenced the `fencing` way, polling every `interval`
    /// while it is held.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect_fenced(
        url: &str,
        key: &str,
        interval: Duration,
        fencing: Fencing,
    ) -> BenchResult<Self> {
        Self::open(url, key, interval, Some(fencing)).await
    }

    async fn open(
        url: &str,
        key: &str,
        interval: Duration,
        fencing: Option<Fencing>,
    ) -> BenchResult<Self> {
        let queue = matches!(fencing, Some(Fencing::Clocked(_))).then(|| format!("{key}:queue"));
        let release = match queue {
            Some(_) => Script::new(include_str!("fifo_release.lua")),
            None => Script::new(include_str!("release.lua")),
        };
        let fenced = fencing.map(|fencing| (fencing, format!("{key}:fence")));
        let connection = redis::Client::open(url)?
            .get_multiplexed_async_connection()
            .await?;
        Ok(Self {
            connection,
            key: key.to_owned(),
            interval,
            lease: Duration::from_secs(30),
            release,
            fenced,
            queue,
        })
    }

    /// One `SET NX PX` attempt (fenced: with its fence, in one step); `Some(token)` when it was
    /// granted.
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
        // The hand-written lock's grant, alone or with its fence beside it.
        let mut set = redis::cmd("SET");
        set.arg(&self.key)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(lease_ms);
        let granted = match &self.fenced {
            None => {
                let set: Option<String> = set.query_async(&mut connection).await?;
                set.is_some()
            }
            Some((Fencing::Script(acquire), fence)) => {
                let fence: u64 = acquire
                    .key(&self.key)
                    .key(fence)
                    .arg(&token)
                    .arg(lease_ms)
                    .invoke_async(&mut connection)
                    .await?;
                fence > 0
            }
            Some((Fencing::Clocked(acquire), fence)) => {
                let fence: u64 = acquire
                    .key(&self.key)
                    .key(fence)
                    .key(&self.queue)
                    .arg(&token)
                    .arg(lease_ms)
                    .invoke_async(&mut connection)
                    .await?;
                fence > 0
            }
            Some((Fencing::Transaction, fence)) => {
                let (set, _fence): (Option<String>, u64) = redis::pipe()
                    .atomic()
                    .add_command(set)
                    .cmd("INCR")
                    .arg(fence)
                    .query_async(&mut connection)
                    .await?;
                set.is_some()
            }
        };
        Ok(granted.then_some(token))
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
        // The FIFO lock's release reads the queue too; `None` adds no key.
        let _: i64 = self
            .lock
            .release
            .key(&self.lock.key)
            .key(&self.lock.queue)
            .arg(&self.token)
            .invoke_async(&mut connection)
            .await?;
        Ok(())
    }
}
