//! The PostgreSQL handoff floor: the least a `LISTEN`/`NOTIFY` handoff costs, whatever the lock
//! around it. Each client has a listening connection of its own (as each process of a lock
//! service has) and a connection for statements; the queue of waiting clients lives in this
//! process, with no table, lease or fencing. A release with waiters sends one `pg_notify` naming
//! the first, whose listener wakes it: the same notification every listening connection
//! receives when a distlock release names its first waiter, without the statements around it.
//! A measured bound, not a lock: its clients share one process.

use std::sync::Arc;

use async_trait::async_trait;
use lock_sql::sqlx::postgres::PgListener;
use lock_sql::sqlx::{self, Connection, PgConnection};
use tokio::sync::Notify;

use crate::BenchResult;
use crate::contend::{Contender, Held};
use crate::peers::relay::{Relay, relay};

/// One client: its id in the relay, its statement connection, and the wake-up its listener
/// task gives when a notification names it.
#[derive(Debug)]
pub struct NotifyRelay {
    relay: Arc<Relay>,
    id: usize,
    channel: String,
    connection: Arc<tokio::sync::Mutex<PgConnection>>,
    woken: Arc<Notify>,
    listening: tokio::task::JoinHandle<()>,
}

impl NotifyRelay {
    /// Connects one client of the relay `name`: its listener is subscribed when this returns.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connections it was opening.
    ///
    /// # Errors
    ///
    /// A connection's or the `LISTEN`'s error.
    pub async fn connect(url: &str, name: &str) -> BenchResult<Self> {
        let relay = relay(&format!("postgres:{name}"));
        let id = relay.join();
        let channel = format!("relay_{:016x}", crate::scenarios::advisory_key(name));
        let mut listener = PgListener::connect(url).await?;
        listener.listen(&channel).await?;
        let woken = Arc::new(Notify::new());
        let wake = Arc::clone(&woken);
        let me = id.to_string();
        let listening = tokio::spawn(async move {
            while let Ok(notification) = listener.recv().await {
                if notification.payload() == me {
                    wake.notify_one();
                }
            }
        });
        Ok(Self {
            relay,
            id,
            channel,
            connection: Arc::new(tokio::sync::Mutex::new(PgConnection::connect(url).await?)),
            woken,
            listening,
        })
    }

    fn hold(&self) -> Box<dyn Held> {
        Box::new(Handed {
            relay: Arc::clone(&self.relay),
            channel: self.channel.clone(),
            connection: Arc::clone(&self.connection),
        })
    }
}

impl Drop for NotifyRelay {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

#[async_trait]
impl Contender for NotifyRelay {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        self.relay.take(self.id, &self.woken).await;
        Ok(self.hold())
    }
}

/// The relay, held: a release names the first waiter, or frees the relay when none waits.
struct Handed {
    relay: Arc<Relay>,
    channel: String,
    connection: Arc<tokio::sync::Mutex<PgConnection>>,
}

#[async_trait]
impl Held for Handed {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let next = self.relay.pass();
        if let Some(next) = next {
            let mut connection = self.connection.lock().await;
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(&self.channel)
                .bind(next.to_string())
                .execute(&mut *connection)
                .await?;
        }
        Ok(())
    }
}
