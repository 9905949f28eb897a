//! A master found through Sentinels, and the watch on their `+switch-master` announcements.
//!
//! A manual failover (`SENTINEL FAILOVER`), or a partition that heals, leaves the old master
//! running as a master until the Sentinels reconfigure it, which takes them up to their next
//! `INFO` round (about ten seconds). A client whose connection stays healthy would keep
//! renewing and granting there, on a server whose writes the promoted replica never sees.
//! So the service listens for the Sentinels' announcement and replaces every connection
//! opened before it; the next command asks the Sentinels for the new master.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use redis::sentinel::SentinelClient;
use tokio::sync::{Mutex, watch};

/// The Sentinels' client, the master's name, and the count of switches seen.
pub(crate) struct Sentinels {
    pub(crate) client: Mutex<SentinelClient>,
    master: String,
    switches: watch::Sender<u64>,
    watching: std::sync::atomic::AtomicBool,
}

/// How long the watch waits before subscribing again after a failure.
const RETRY: Duration = Duration::from_millis(500);

impl Sentinels {
    pub(crate) fn new(client: SentinelClient, master: &str) -> Self {
        Self {
            client: Mutex::new(client),
            master: master.to_owned(),
            switches: watch::Sender::new(0),
            watching: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The number of switches seen so far: a connection opened at a lower number goes to a
    /// master that is no longer the master.
    pub(crate) fn switches(&self) -> u64 {
        *self.switches.borrow()
    }

    /// A receiver that changes on every switch.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.switches.subscribe()
    }

    /// Starts the watch if it is not running; it ends once every handle is dropped.
    pub(crate) fn watch(self: &Arc<Self>, limit: Duration) {
        if self
            .watching
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        tokio::spawn(watch_switches(Arc::downgrade(self), limit));
    }
}

/// Subscribes to `+switch-master` on one Sentinel after another, counting the switches of our
/// master, until the service is gone.
async fn watch_switches(sentinels: Weak<Sentinels>, limit: Duration) {
    loop {
        let Some(strong) = sentinels.upgrade() else {
            return;
        };
        let master = strong.master.clone();
        let connecting = async {
            let client = strong
                .client
                .lock()
                .await
                .async_get_sentinel_client()
                .await?;
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe("+switch-master").await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        let pubsub = tokio::time::timeout(limit, connecting).await;
        drop(strong);
        let Ok(Ok(pubsub)) = pubsub else {
            tokio::time::sleep(RETRY).await;
            continue;
        };
        let mut messages = pubsub.into_on_message();
        loop {
            let message = tokio::select! {
                message = messages.next() => message,
                // Checks now and then that someone still uses the service.
                () = tokio::time::sleep(Duration::from_secs(1)) => {
                    if sentinels.strong_count() == 0 {
                        return;
                    }
                    continue;
                }
            };
            let Some(message) = message else { break };
            let payload: String = message.get_payload().unwrap_or_default();
            if names_master(&payload, &master) {
                let Some(strong) = sentinels.upgrade() else {
                    return;
                };
                tracing::info!(master, %payload, "the Sentinels switched masters; reconnecting");
                strong.switches.send_modify(|count| *count += 1);
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Whether a `+switch-master` payload (`NAME OLD_IP OLD_PORT NEW_IP NEW_PORT`) is about
/// `master`.
fn names_master(payload: &str, master: &str) -> bool {
    payload.split(' ').next() == Some(master)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_masters_switch_counts() {
        assert!(names_master(
            "distlock 127.0.0.1 6379 127.0.0.1 6380",
            "distlock"
        ));
        assert!(!names_master(
            "distlock2 127.0.0.1 6379 127.0.0.1 6380",
            "distlock"
        ));
        assert!(!names_master("", "distlock"));
    }
}
