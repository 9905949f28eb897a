//! The Redis handoff floor: the least a pub/sub handoff costs, whatever the lock around it. Each
//! client subscribes once, at connect, to a channel of its own on a connection of its own (as
//! each process of a lock service has its subscriber connection), and has a connection for
//! commands; the queue of waiting clients lives in this process, with no key, script, lease or
//! fencing. A release with waiters sends one `PUBLISH` on the first waiter's channel, whose
//! subscriber wakes it: the message a distlock release sends its first waiter, without the
//! scripts around it (the waiter's try, its `SUBSCRIBE` and `UNSUBSCRIBE`, the release's
//! compare-and-delete). A measured bound, not a lock: its clients share one process.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::StreamExt;
use lock_redis::redis::{self, aio::MultiplexedConnection};
use tokio::sync::Notify;

use crate::BenchResult;
use crate::contend::{Contender, Held};
use crate::peers::relay::{Relay, relay};

/// One client: its id in the relay, its command connection, and the wake-up its subscriber
/// task gives on every message on its channel.
#[derive(Debug)]
pub struct PublishRelay {
    relay: Arc<Relay>,
    id: usize,
    /// The channels are `PREFIX:ID`.
    prefix: String,
    connection: MultiplexedConnection,
    woken: Arc<Notify>,
    listening: tokio::task::JoinHandle<()>,
}

impl PublishRelay {
    /// Connects one client of the relay `name`: it is subscribed when this returns.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connections it was opening.
    ///
    /// # Errors
    ///
    /// A connection's or the `SUBSCRIBE`'s error.
    pub async fn connect(url: &str, name: &str) -> BenchResult<Self> {
        let relay = relay(&format!("redis:{name}"));
        let id = relay.join();
        let prefix = format!("handoff-floor:{name}");
        let client = redis::Client::open(url)?;
        let (mut sink, mut messages) = client.get_async_pubsub().await?.split();
        sink.subscribe(format!("{prefix}:{id}")).await?;
        let woken = Arc::new(Notify::new());
        let wake = Arc::clone(&woken);
        let listening = tokio::spawn(async move {
            // Kept for the task's life: dropping the sink would end the subscription.
            let _sink = sink;
            while messages.next().await.is_some() {
                wake.notify_one();
            }
        });
        Ok(Self {
            relay,
            id,
            prefix,
            connection: client.get_multiplexed_async_connection().await?,
            woken,
            listening,
        })
    }

    fn hold(&self) -> Box<dyn Held> {
        Box::new(Handed {
            relay: Arc::clone(&self.relay),
            prefix: self.prefix.clone(),
            connection: self.connection.clone(),
        })
    }
}

impl Drop for PublishRelay {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

#[async_trait]
impl Contender for PublishRelay {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        self.relay.take(self.id, &self.woken).await;
        Ok(self.hold())
    }
}

/// The relay, held: a release wakes the first waiter, or frees the relay when none waits.
struct Handed {
    relay: Arc<Relay>,
    prefix: String,
    connection: MultiplexedConnection,
}

#[async_trait]
impl Held for Handed {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        if let Some(next) = self.relay.pass() {
            let mut connection = self.connection.clone();
            let _receivers: i64 = redis::cmd("PUBLISH")
                .arg(format!("{}:{next}", self.prefix))
                .arg("")
                .query_async(&mut connection)
                .await?;
        }
        Ok(())
    }
}
