//! The PostgreSQL release listener: one connection per lock service that `LISTEN`s on the
//! table's channel (releases that wake every acquisition of a name, or a waiter of an earlier
//! version) and on the service's own (grants to its waiters), and fans notifications out to
//! waiters.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lock_core::Backoff;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use tokio::sync::broadcast;

use crate::db::Owner;
use crate::wakeups::Wake;

/// Runs until dropped; see [`Listener::run`].
pub(crate) struct Listener {
    pub(crate) options: PgConnectOptions,
    /// The table's channel and the service's.
    pub(crate) channels: [String; 2],
    pub(crate) timeout: Duration,
    pub(crate) sender: broadcast::Sender<Wake>,
    pub(crate) listening: Arc<AtomicBool>,
}

impl Listener {
    /// Listens forever: (re)connects with backoff, forwards each notification (see
    /// [`wake`]) to waiters, and wakes every waiter after a reconnect, since notifications
    /// sent while disconnected are lost.
    pub(crate) async fn run(self) {
        // A pool of its own, so the listening connection never takes a slot of the main pool.
        let pool: PgPool = PgPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(self.timeout)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_lazy_with(self.options.clone());
        let backoff = Backoff::exponential(Duration::from_millis(50), Duration::from_secs(5))
            .unwrap_or_default();
        let mut failures = 0;
        loop {
            match self.subscribe(&pool).await {
                Ok(mut listener) => {
                    failures = 0;
                    self.set_listening(true);
                    self.forward(&mut listener).await;
                }
                Err(error) => tracing::debug!(%error, "release listener cannot connect"),
            }
            self.set_listening(false);
            tokio::time::sleep(backoff.delay(failures)).await;
            failures = failures.saturating_add(1);
        }
    }

    async fn subscribe(&self, pool: &PgPool) -> Result<PgListener, sqlx::Error> {
        let connect = async {
            let mut listener = PgListener::connect_with(pool).await?;
            let [table, service] = &self.channels;
            listener
                .listen_all([table.as_str(), service.as_str()])
                .await?;
            Ok(listener)
        };
        match tokio::time::timeout(self.timeout * 2, connect).await {
            Ok(result) => result,
            Err(_elapsed) => Err(sqlx::Error::PoolTimedOut),
        }
    }

    /// Forwards notifications until the connection fails for good.
    async fn forward(&self, listener: &mut PgListener) {
        loop {
            match listener.try_recv().await {
                Ok(Some(notification)) => {
                    let _no_waiters = self.sender.send(wake(notification.payload()));
                }
                // Reconnected: notifications may have been missed meanwhile.
                Ok(None) => {
                    let _no_waiters = self.sender.send(Wake::Everyone);
                }
                Err(error) => {
                    tracing::debug!(%error, "release listener lost its connection");
                    return;
                }
            }
        }
    }

    fn set_listening(&self, listening: bool) {
        let was = self.listening.swap(listening, Ordering::AcqRel);
        if listening && !was {
            // Releases before the LISTEN took effect were not seen: everyone re-checks.
            let _no_waiters = self.sender.send(Wake::Everyone);
        }
    }
}

/// The channel on which a PostgreSQL release tells the service `service` that it granted the
/// lock to one of its waiters: `distlock_` and the first 8 bytes of the waiter's entry id in
/// hex, as release.sql derives it.
pub(crate) fn service_channel(service: u64) -> String {
    format!("distlock_{service:016x}")
}

/// The wake-up a notification payload stands for: `NAME` when a lock was released with nobody
/// in line, `NAME\nHEX` when the waiter with entry id `HEX` is first in line, `NAME\nHEX FENCE`
/// when the release granted that waiter the lock with fencing token `FENCE` (lock names hold
/// no control characters).
fn wake(payload: &str) -> Wake {
    let Some((name, first)) = payload.rsplit_once('\n') else {
        return Wake::Released(Arc::from(payload));
    };
    let (hex, fence) = match first.split_once(' ') {
        Some((hex, fence)) => (hex, fence.parse::<u64>().ok()),
        None => (first, None),
    };
    match (Owner::from_hex(hex), fence, first.contains(' ')) {
        (Some(first), Some(fence), true) => Wake::Granted(Arc::from(name), first, fence),
        (Some(first), None, false) => Wake::Handoff(Arc::from(name), first),
        _ => Wake::Released(Arc::from(payload)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_name_the_lock_and_the_first_waiter() {
        let first = Owner::random();
        let handoff = wake(&format!("jobs/nightly\n{}", first.to_hex()));
        assert!(
            matches!(handoff, Wake::Handoff(name, id) if &*name == "jobs/nightly" && id == first)
        );
        let released = wake("jobs/nightly");
        assert!(matches!(released, Wake::Released(name) if &*name == "jobs/nightly"));
        let unparsed = wake("a\nnot-hex");
        assert!(matches!(unparsed, Wake::Released(name) if &*name == "a\nnot-hex"));
        let granted = wake(&format!(
            "jobs/nightly\n{} 1764250000000123",
            first.to_hex()
        ));
        assert!(
            matches!(granted, Wake::Granted(name, id, 1_764_250_000_000_123)
            if &*name == "jobs/nightly" && id == first)
        );
        let bad_fence = format!("a\n{} -1", first.to_hex());
        assert!(matches!(wake(&bad_fence), Wake::Released(name) if *name == *bad_fence));
    }
}
