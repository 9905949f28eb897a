//! The floor of distlock's own Redis scripts: lock-redis's `acquire.lua` and `release.lua`, sent
//! by the simplest client (one `EVALSHA` each on a multiplexed connection) with the arguments
//! a distlock acquisition sends. It does the same server work as distlock and nothing else on
//! the client: no engine, no guard, no lease scheduler.
//!
//! Contended, it waits as distlock does: its try joins the queue with its grant terms, and the
//! release that makes it first grants it the lock and publishes `TOKEN FENCE` on its client's
//! inbox, a channel of its own that its subscriber connection listens on. A wait with no message
//! tries again after the holder's lease or a third of its entry's ttl, as distlock's fallback
//! timer does.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use lock_redis::redis::{self, Script, aio::MultiplexedConnection};
use tokio::sync::{Mutex, mpsc};

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
    inbox: Arc<Inbox>,
}

/// A client's inbox: the channel `INBOX_PREFIX` + its 16 hex digits, which every token of the
/// client starts with; the messages the releases published on it.
struct Inbox {
    service: String,
    messages: Mutex<mpsc::UnboundedReceiver<String>>,
    listening: tokio::task::JoinHandle<()>,
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

/// The prefix of the inbox channels, which the release script is given.
const INBOX_PREFIX: &str = "floor-inbox:";

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
        let client = redis::Client::open(url)?;
        let connection = client.get_multiplexed_async_connection().await?;
        let service = format!("{:016x}", rand::random::<u64>());
        let (mut sink, mut stream) = client.get_async_pubsub().await?.split();
        sink.subscribe(format!("{INBOX_PREFIX}{service}")).await?;
        let (sender, messages) = mpsc::unbounded_channel();
        let listening = tokio::spawn(async move {
            // Kept for the task's life: dropping the sink would end the subscription.
            let _sink = sink;
            while let Some(message) = stream.next().await {
                let payload: String = message.get_payload().unwrap_or_default();
                if sender.send(payload).is_err() {
                    break;
                }
            }
        });
        let inbox = Arc::new(Inbox {
            service,
            messages: Mutex::new(messages),
            listening,
        });
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
            inbox,
        })
    }
}

struct ScriptHeld {
    floor: RedisScriptFloor,
    token: String,
}

impl RedisScriptFloor {
    /// One try of the acquire script for `token`, which joins the queue (or refreshes its
    /// place) with its grant terms when the lock is taken: `Ok(None)` when granted, else how
    /// long the lock may stay taken.
    async fn try_acquire(&self, token: &str) -> BenchResult<Option<Duration>> {
        let [lock, fence, _, queue, expiry, terms] = &self.keys;
        let mut connection = self.connection.clone();
        let (granted, ms): (i64, i64) = self
            .acquire
            .key(lock)
            .key(fence)
            .key(queue)
            .key(expiry)
            .key(terms)
            .arg(token)
            .arg(LEASE.as_millis() as u64)
            .arg("1")
            .arg(WAITER_TTL.as_millis() as u64)
            .arg(format!("floor:{}", std::process::id()))
            .arg("")
            .arg(1)
            .arg(1)
            .invoke_async(&mut connection)
            .await?;
        Ok((granted != 1).then(|| Duration::from_millis(u64::try_from(ms).unwrap_or(0))))
    }
}

#[async_trait]
impl Contender for RedisScriptFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let token = format!("{}{:016x}", self.inbox.service, rand::random::<u64>());
        let mut messages = self.inbox.messages.lock().await;
        while let Some(taken) = self.try_acquire(&token).await? {
            // A grant's message starts with the token it went to; others are stale.
            let fallback = (taken + Duration::from_millis(1)).min(WAITER_TTL / 3);
            match tokio::time::timeout(fallback, grant_message(&mut messages, &token)).await {
                Ok(true) => break,
                Ok(false) => return Err("the script floor's inbox subscription ended".into()),
                // The fallback timer: try again (the lock may be ours already, or free).
                Err(_) => {}
            }
        }
        Ok(Box::new(ScriptHeld {
            floor: self.clone(),
            token,
        }))
    }
}

/// Waits for the message of a grant to `token` (it starts with the token; messages of earlier
/// tokens are stale): `false` when the subscription ended first.
async fn grant_message(messages: &mut mpsc::UnboundedReceiver<String>, token: &str) -> bool {
    while let Some(message) = messages.recv().await {
        if message.starts_with(token) {
            return true;
        }
    }
    false
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
            .arg(INBOX_PREFIX)
            .invoke_async(&mut connection)
            .await?;
        Ok(())
    }
}
