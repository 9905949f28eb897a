//! The floor of distlock's own Redis scripts: lock-redis's `acquire.lua` and `release.lua`, sent
//! by the simplest client (one `EVALSHA` each on a multiplexed connection) with the arguments
//! an uncontended distlock acquisition sends. It does the same server work as distlock's pair
//! and nothing else on the client: no engine, no guard, no lease scheduler. Uncontended only:
//! it never waits.

use std::time::Duration;

use async_trait::async_trait;
use lock_redis::redis::{self, Script, aio::MultiplexedConnection};

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One client (its own connection) sending distlock's scripts for one name.
#[derive(Clone)]
pub struct RedisScriptFloor {
    connection: MultiplexedConnection,
    /// The lock key, fence counter, wake-up channel prefix, queue, queue expiries and queued
    /// waiters' grant terms, named as lock-redis names them.
    keys: [String; 6],
    acquire: Script,
    release: Script,
}

impl std::fmt::Debug for RedisScriptFloor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisScriptFloor")
            .field("key", &self.keys[0])
            .finish_non_exhaustive()
    }
}

/// The lease the acquire script is asked for, as distlock's default.
const LEASE: Duration = Duration::from_secs(30);

/// How long a waiter's queue entry lasts, as lock-redis's default.
const WAITER_TTL: Duration = Duration::from_secs(10);

impl RedisScriptFloor {
    /// Connects to `url` for the lock `name`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect(url: &str, name: &str) -> BenchResult<Self> {
        let connection = redis::Client::open(url)?
            .get_multiplexed_async_connection()
            .await?;
        let tag = format!("{{floor:{name}}}");
        Ok(Self {
            connection,
            keys: [
                tag.clone(),
                format!("{tag}:fence"),
                format!("{tag}:released"),
                format!("{tag}:queue"),
                format!("{tag}:queue:expiry"),
                format!("{tag}:queue:terms"),
            ],
            acquire: Script::new(include_str!("../../../lock-redis/src/scripts/acquire.lua")),
            release: Script::new(include_str!("../../../lock-redis/src/scripts/release.lua")),
        })
    }
}

struct ScriptHeld {
    floor: RedisScriptFloor,
    token: String,
}

#[async_trait]
impl Contender for RedisScriptFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let token = super::token();
        let [lock, fence, _, queue, expiry, terms] = &self.keys;
        let mut connection = self.connection.clone();
        let (granted, _fence): (i64, i64) = self
            .acquire
            .key(lock)
            .key(fence)
            .key(queue)
            .key(expiry)
            .key(terms)
            .arg(&token)
            .arg(LEASE.as_millis() as u64)
            .arg("1")
            .arg(WAITER_TTL.as_millis() as u64)
            .arg(format!("floor:{}", std::process::id()))
            .arg("")
            .arg(1)
            .arg(1)
            .invoke_async(&mut connection)
            .await?;
        if granted != 1 {
            return Err("the script floor's lock was held: it runs uncontended only".into());
        }
        Ok(Box::new(ScriptHeld {
            floor: self.clone(),
            token,
        }))
    }
}

#[async_trait]
impl Held for ScriptHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let [lock, fence, channel, queue, expiry, terms] = &self.floor.keys;
        let mut connection = self.floor.connection.clone();
        let (_released, _receivers): (i64, i64) = self
            .floor
            .release
            .key(lock)
            .key(channel)
            .key(queue)
            .key(expiry)
            .key(terms)
            .key(fence)
            .arg(&self.token)
            .arg("")
            .invoke_async(&mut connection)
            .await?;
        Ok(())
    }
}
