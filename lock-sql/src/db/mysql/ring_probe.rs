//! Test hooks: how long the ring that wakes a parked waiter takes at its worst, which
//! connection holds the anchor that parked connections wait for, parking as on MySQL, and the
//! parks sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sqlx::Connection;
use sqlx::mysql::MySqlConnection;

use super::{MyDb, sleepers};
use crate::db::Owner;
use crate::error::SqlError;

impl MyDb {
    /// Parks one of the service's connections on `name` (held by the caller, so that each park
    /// waits) again and again, a millisecond at a time, while ringing it `rings` times from
    /// another connection: the slowest ring. Many rings reach a park just as it ends.
    pub(crate) async fn slowest_ring(&self, name: &str, rings: u32) -> Result<Duration, SqlError> {
        let mut bell =
            self.sleepers.bell().await.ok_or_else(|| {
                SqlError::Sqlx(sqlx::Error::Protocol("no connection to park".into()))
            })?;
        let sleeper = bell.id();
        let stop = Arc::new(AtomicBool::new(false));
        let parking = {
            let (stop, name) = (Arc::clone(&stop), name.to_owned());
            tokio::spawn(async move {
                let (waiter, owner) = (Owner::random(), Owner::random());
                while !stop.load(Ordering::Relaxed) {
                    bell.park(&name, waiter, owner, Duration::from_millis(1), false)
                        .await?;
                }
                Ok::<_, SqlError>(())
            })
        };
        let mut ringer = MySqlConnection::connect_with(&self.options).await?;
        let mut slowest = Duration::ZERO;
        for _ in 0..rings {
            let rung = Instant::now();
            sleepers::ring(&mut ringer, sleeper, self.timeout).await?;
            slowest = slowest.max(rung.elapsed());
        }
        stop.store(true, Ordering::Relaxed);
        let parked = parking.await.map_err(|error| {
            SqlError::Sqlx(sqlx::Error::Protocol(format!("the parking task: {error}")))
        })?;
        parked.map(|()| slowest)
    }

    /// The server's id of the connection holding the anchor, if one is open.
    pub(crate) fn parking_anchor(&self) -> Option<u64> {
        self.sleepers.anchor_id()
    }

    /// Used by the test hook `SqlLock::park_whole_seconds` only.
    pub(crate) fn park_whole_seconds(&self) {
        self.sleepers.park_whole_seconds();
    }

    /// Used by the test hook `SqlLock::parks_sent` only.
    pub(crate) fn parks_sent(&self) -> u64 {
        self.sleepers.parks_sent()
    }
}
