//! The waiters table, per dialect behind one call: an acquisition that waits keeps an entry
//! there, which is its place in line (waiters are served in the order their entries were
//! placed) and lets `inspect` count who waits across every process.

use std::time::Duration;

use super::{Attempt, Conn, Db, Owner, Waiting, remaining};
use crate::error::SqlError;
use crate::waiting::ENTRY_LIFETIME;

/// Where a waiting acquisition stands, as its dialect's `wait_probe.sql` read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    /// The live holder's remaining lease; `None` when the lock is free.
    pub(crate) remaining: Option<Duration>,
    /// Live entries ahead of the acquisition's.
    pub(crate) ahead: u64,
    /// Whether the acquisition's entry is there (an entry that expired may have been purged).
    pub(crate) queued: bool,
}

impl Line {
    /// The place as a dialect's `wait_probe.sql` returned it: the holder's lease left in
    /// whole `unit`s (NULL when the lock is free), the live entries ahead, and whether the
    /// acquisition's entry is there.
    pub(crate) fn read((left, ahead, queued): (Option<i64>, i64, bool), unit: Duration) -> Self {
        Self {
            remaining: remaining(left, unit),
            ahead: u64::try_from(ahead).unwrap_or(0),
            queued,
        }
    }
}

/// The terms a release grants a waiting acquisition the lock on (MySQL, SQLite), which its
/// entry carries: fixed for the acquisition.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Terms<'a> {
    pub(crate) owner: Owner,
    pub(crate) lease: Duration,
    pub(crate) label: &'a str,
}

impl Db {
    /// On the dialects whose waiters poll: records `waiting` as waiting for `name`, or extends
    /// its entry by [`ENTRY_LIFETIME`], on `conn` (after the try's statement on it); on MySQL
    /// the entry names the connection the acquisition parks, if any; it carries the `terms` a
    /// release grants it the lock on. PostgreSQL's acquire statements place entries
    /// themselves, with their grant terms.
    pub(crate) async fn register(
        &self,
        conn: &mut Conn,
        name: &str,
        waiting: Waiting,
        terms: Terms<'_>,
    ) -> Result<(), SqlError> {
        let waiter = waiting.id;
        match (self, conn) {
            #[cfg(feature = "mysql")]
            (Db::MySql(db), Conn::MySql(conn)) => {
                db.register(conn, name, waiter, ENTRY_LIFETIME, waiting.sleeper, terms)
                    .await
            }
            #[cfg(feature = "sqlite")]
            (Db::Sqlite(db), Conn::Sqlite(conn)) => {
                db.register(conn, name, waiter, ENTRY_LIFETIME, terms).await
            }
            #[allow(unreachable_patterns)]
            _ => Err(SqlError::Sqlx(sqlx::Error::Protocol(
                "waiter entries are placed by the acquire statement on this dialect".to_owned(),
            ))),
        }
    }

    /// Removes `waiter`'s entry for `name`, and expired entries of `name`, on `conn` if given,
    /// else on a connection from the pool. Removing an entry that is not there is no error.
    pub(crate) async fn leave(
        &self,
        conn: Option<&mut Conn>,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        let mut fresh;
        let conn = match conn {
            Some(conn) => conn,
            None => {
                fresh = self.connection().await?;
                &mut fresh
            }
        };
        with_conn!(self, conn, (db, conn) => db.leave(conn, name, waiter).await)
    }

    /// Removes the entry of `waiter`, just granted the lock, on `conn`: on MySQL by its key
    /// alone, purging the name's expired entries only now and then (the handoff's path should
    /// wait for no other entry); elsewhere as [`Db::leave`].
    pub(crate) async fn leave_granted(
        &self,
        conn: &mut Conn,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        match (self, conn) {
            #[cfg(feature = "mysql")]
            (Db::MySql(db), Conn::MySql(conn)) => db.leave_granted(conn, name, waiter).await,
            (db, conn) => db.leave(Some(conn), name, waiter).await,
        }
    }

    /// After an acquisition left the line without the lock, on MySQL: wakes the first waiter
    /// in line if the lock is free, as a release would have (it may have woken the one that
    /// left). Elsewhere nothing: PostgreSQL's removal statement does it itself, and SQLite's
    /// waiters read the line.
    pub(crate) async fn pass_on(&self, name: &str) -> Result<(), SqlError> {
        match self {
            #[cfg(feature = "mysql")]
            Db::MySql(db) => db.pass_on(name).await,
            #[allow(unreachable_patterns)]
            _ => {
                let _ = name;
                Ok(())
            }
        }
    }

    /// On the dialects whose waiters poll: reads where the acquisition whose entry was placed
    /// stands, on `conn`. `None` when its turn came (the lock is free and no live entry is
    /// ahead of its entry, or a release granted it the lock on its `terms`), so that
    /// the acquire statement follows; else the place, after refreshing the entry when
    /// `waiting.place` says it is due, or placing it again (at the back) when it is gone.
    pub(crate) async fn behind(
        &self,
        conn: &mut Conn,
        name: &str,
        waiting: Waiting,
        terms: Terms<'_>,
    ) -> Result<Option<Attempt>, SqlError> {
        let line: Line = match (self, &mut *conn) {
            #[cfg(feature = "mysql")]
            (Db::MySql(db), Conn::MySql(conn)) => {
                db.probe(conn, name, waiting.id, terms.owner).await?
            }
            #[cfg(feature = "sqlite")]
            (Db::Sqlite(db), Conn::Sqlite(conn)) => {
                db.probe(conn, name, waiting.id, terms.owner).await?
            }
            // PostgreSQL's acquire statement reads the line itself.
            #[allow(unreachable_patterns)]
            _ => return Ok(None),
        };
        if line.queued && line.ahead == 0 && line.remaining.is_none() {
            return Ok(None);
        }
        if waiting.place || !line.queued {
            self.register(conn, name, waiting, terms).await?;
        }
        Ok(Some(Attempt::Queued {
            ahead: line.ahead,
            remaining: line.remaining,
        }))
    }
}
