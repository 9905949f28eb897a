//! The user lock that a service's parked connections wait for.
//!
//! A parked statement must wait in a way that `KILL QUERY` ends at once. `SLEEP()` does not
//! always: on MariaDB 10.11, a `KILL QUERY` that reaches a sleeping statement just as its sleep
//! ends (its time ran out, or an earlier `KILL` woke it) now and then waits two seconds before
//! it returns, and the sleeper waits with it. A handoff under contention then took two seconds
//! instead of a millisecond. A wait for a user lock (`GET_LOCK`) has no such stall: `KILL QUERY`
//! ends it promptly in both cases. So each service holds one user lock of a random name on a
//! connection of its own, the anchor, and its parked connections wait for that lock until
//! their time runs out or a release interrupts them.
//!
//! Should the anchor's connection end, the server hands its lock to a parked connection. That
//! park reports it, its connection is closed (which frees the lock for the next one, which
//! does the same), and the service's next parked connection opens a new anchor.

use std::sync::Arc;
use std::time::Duration;

use sqlx::Connection;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};

use crate::error::{SqlError, timed};

/// A user lock held for as long as this value lives, on a connection used for nothing else.
#[derive(Debug)]
pub(crate) struct Anchor {
    name: Arc<str>,
    /// The server's id of the connection that holds it.
    id: u64,
    /// Whether the server's `GET_LOCK` waits fractions of a second (MariaDB since 10.1.2);
    /// MySQL's waits whole seconds, the timeout rounded to the nearest.
    waits_fractions: bool,
    /// Holds the lock: closed, it frees it.
    _holder: MySqlConnection,
}

impl Anchor {
    /// Connects and takes a user lock of a fresh random name, and learns whether the server
    /// waits fractions of a second.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropped mid-way, the connection, if opened, is closed and frees the lock.
    ///
    /// # Errors
    ///
    /// Connecting or taking the lock failed, or took longer than `timeout`.
    pub(crate) async fn open(
        options: &MySqlConnectOptions,
        timeout: Duration,
    ) -> Result<Self, SqlError> {
        // 46 characters: user lock names may have 64.
        let name = format!("distlock-park-{:032x}", rand::random::<u128>());
        let open = async {
            let mut holder = MySqlConnection::connect_with(options).await?;
            let query = "SELECT GET_LOCK(?, 0), CONNECTION_ID(), VERSION() LIKE '%MariaDB%'";
            let (taken, id, mariadb): (Option<i64>, u64, i64) = sqlx::query_as(query)
                .bind(name.as_str())
                .fetch_one(&mut holder)
                .await?;
            Ok::<_, sqlx::Error>((holder, taken, id, mariadb == 1))
        };
        match timed(timeout, open).await? {
            (holder, Some(1), id, waits_fractions) => Ok(Self {
                name: name.into(),
                id,
                waits_fractions,
                _holder: holder,
            }),
            (_, taken, _, _) => Err(SqlError::Sqlx(sqlx::Error::Protocol(format!(
                "GET_LOCK of a fresh name returned {taken:?}, not 1"
            )))),
        }
    }

    /// The user lock's name.
    pub(crate) fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// Whether the server's `GET_LOCK` waits fractions of a second.
    pub(crate) fn waits_fractions(&self) -> bool {
        self.waits_fractions
    }

    /// The server's id of the connection that holds the lock.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}
