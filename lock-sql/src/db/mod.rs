//! The statements, per dialect, behind one enum.

#[cfg(feature = "mysql")]
mod mysql;
mod pool;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::time::Duration;

use lock_core::Result;
use lock_core::backend::Sending;
use sqlx::Database;
use sqlx::pool::PoolConnection;

use crate::error::SqlError;
use crate::settings::Settings;

/// An acquisition's waiter entry, as its acquire statement sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiting {
    /// The entry's id, fixed for the acquisition (placed on the server or not).
    pub(crate) id: Owner,
    /// Whether to place or refresh the entry if the lock is held.
    pub(crate) place: bool,
    /// Whether an earlier try may have placed the entry.
    pub(crate) placed: bool,
    /// The id of the connection the acquisition parks (MySQL), which its entry names.
    pub(crate) sleeper: Option<u64>,
    /// Whether its parked connection just found or was told that its turn came: the try then
    /// sends the acquire statement without reading its place first.
    pub(crate) turn: bool,
}

/// What one acquire statement found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// The row is ours, with this fencing token.
    Granted(u64),
    /// A release granted the row to this acquisition's entry (MySQL), with this fencing
    /// token: the try took the grant up without writing, so the lease runs from the grant,
    /// which came after the acquisition's last try that found the lock held.
    Handed(u64),
    /// Another owner holds a live lease, ending in `remaining` when the statement could tell.
    Held(Option<Duration>),
    /// Not this acquisition's turn, as its waiter entry's place in line showed (on the
    /// dialects whose waiters poll): `ahead` live entries are before it, and the holder's
    /// lease, if any, ends in `remaining`.
    Queued {
        ahead: u64,
        remaining: Option<Duration>,
    },
    /// The database rolled the statement back because of contention (deadlock, busy file):
    /// nothing changed; try again soon.
    Contended,
}

/// One database pool and its prepared statement texts.
#[derive(Debug)]
pub(crate) enum Db {
    #[cfg(feature = "postgres")]
    Postgres(Box<postgres::PgDb>),
    #[cfg(feature = "mysql")]
    MySql(Box<mysql::MyDb>),
    #[cfg(feature = "sqlite")]
    Sqlite(Box<sqlite::LiteDb>),
}

/// A pooled connection of one dialect, held across an acquire attempt so that the cleanup of
/// an interrupted attempt runs on the same connection, after the attempt's statement.
pub(crate) enum Conn {
    #[cfg(feature = "postgres")]
    Postgres(PoolConnection<sqlx::Postgres>),
    #[cfg(feature = "mysql")]
    MySql(PoolConnection<sqlx::MySql>),
    #[cfg(feature = "sqlite")]
    Sqlite(PoolConnection<sqlx::Sqlite>),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Conn")
    }
}

/// Calls the same method on whichever dialect `$db` is.
macro_rules! dispatch {
    ($db:expr, $inner:ident => $call:expr) => {
        match *$db {
            #[cfg(feature = "postgres")]
            Db::Postgres(ref $inner) => $call,
            #[cfg(feature = "mysql")]
            Db::MySql(ref $inner) => $call,
            #[cfg(feature = "sqlite")]
            Db::Sqlite(ref $inner) => $call,
        }
    };
}

/// Calls the same method on whichever dialect `$db` and `$conn` are.
macro_rules! with_conn {
    ($db:expr, $conn:expr, ($inner:ident, $c:ident) => $call:expr) => {
        match ($db, $conn) {
            #[cfg(feature = "postgres")]
            (Db::Postgres($inner), Conn::Postgres($c)) => $call,
            #[cfg(feature = "mysql")]
            (Db::MySql($inner), Conn::MySql($c)) => $call,
            #[cfg(feature = "sqlite")]
            (Db::Sqlite($inner), Conn::Sqlite($c)) => $call,
            #[allow(unreachable_patterns)]
            _ => Err(SqlError::Sqlx(sqlx::Error::Protocol(
                "a connection of another dialect".to_owned(),
            ))),
        }
    };
}

/// Makes ring the process's TLS provider unless one is chosen: sqlx asks for the process default
/// for `verify-ca`, and a process whose dependencies enable both of rustls' providers (rustls'
/// defaults, or ZooKeeper's TLS beside us) has none by itself, so rustls would panic.
fn choose_tls_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another installer leaves a provider in place: that is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

// After the macros, which they use.
mod admin;
pub(crate) mod claim_rows;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod name_set;
mod owner;
mod parking;
mod privileges;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod renewals;
mod schema;
mod text;
mod waiters;

pub(crate) use admin::like_prefix;
pub(crate) use owner::Owner;
pub(crate) use parking::{Bell, PARK_AT_MOST, Woken};
pub(crate) use schema::Schema;
pub(crate) use text::statement;
use waiters::Terms;

impl Db {
    /// Builds the pool (connecting lazily) for validated settings. Needs a tokio runtime.
    #[allow(unreachable_code, unused_variables)]
    pub(crate) fn new(config: &Settings) -> Result<Self> {
        choose_tls_provider();
        Ok(match config.dialect {
            #[cfg(feature = "postgres")]
            crate::Dialect::Postgres => Db::Postgres(Box::new(postgres::PgDb::new(config)?)),
            #[cfg(feature = "mysql")]
            crate::Dialect::MySql => Db::MySql(Box::new(mysql::MyDb::new(config)?)),
            #[cfg(feature = "sqlite")]
            crate::Dialect::Sqlite => Db::Sqlite(Box::new(sqlite::LiteDb::new(config)?)),
            #[allow(unreachable_patterns)]
            other => {
                return Err(lock_core::Error::invalid_input(format!(
                    "lock-sql was built without the `{}` feature",
                    other.feature()
                )));
            }
        })
    }

    /// After the pool timed out getting a connection: one connection made directly, whose
    /// error says why (refused, wrong protocol, bad credentials) where the pool's does not.
    #[cfg_attr(
        not(any(feature = "postgres", feature = "mysql")),
        allow(unused_variables)
    )]
    pub(crate) async fn diagnose(&self, timeout: Duration) -> Option<SqlError> {
        match *self {
            #[cfg(feature = "postgres")]
            Db::Postgres(ref db) => db.diagnose(timeout).await,
            #[cfg(feature = "mysql")]
            Db::MySql(ref db) => db.diagnose(timeout).await,
            #[cfg(feature = "sqlite")]
            Db::Sqlite(_) => None,
        }
    }

    pub(crate) async fn ensure_schema(&self) -> Result<(), SqlError> {
        dispatch!(self, db => db.ensure_schema().await)
    }

    /// A connection from the pool, waiting at most the connect timeout.
    pub(crate) async fn connection(&self) -> Result<Conn, SqlError> {
        Ok(match *self {
            #[cfg(feature = "postgres")]
            Db::Postgres(ref db) => Conn::Postgres(db.connection().await?),
            #[cfg(feature = "mysql")]
            Db::MySql(ref db) => Conn::MySql(db.connection().await?),
            #[cfg(feature = "sqlite")]
            Db::Sqlite(ref db) => Conn::Sqlite(db.connection().await?),
        })
    }

    /// One acquire attempt on `conn`; a grant records `label` and the grant time. Waiters are
    /// served in arrival order on every dialect. On PostgreSQL the acquire statement itself
    /// places, refreshes and removes the acquisition's waiter entry (see
    /// [`Db::acquire_keeps_entry`]). On the others a try whose entry is placed first reads its
    /// place in line, and sends the acquire statement only when its turn came; a try that
    /// finds the lock held and `waiting.place` set places or refreshes the entry by a second
    /// statement on `conn`.
    pub(crate) async fn acquire(
        &self,
        conn: &mut Conn,
        name: &str,
        owner: Owner,
        lease: Duration,
        label: &str,
        waiting: Waiting,
    ) -> Result<Attempt, SqlError> {
        let polls = !self.acquire_keeps_entry();
        let terms = Terms {
            owner,
            lease,
            label,
        };
        if polls && waiting.placed && !waiting.turn {
            if let Some(queued) = self.behind(conn, name, waiting, terms).await? {
                return Ok(queued);
            }
        }
        let outcome = with_conn!(self, &mut *conn, (db, conn) => db.acquire(conn, name, owner, lease, label, waiting).await)?;
        if waiting.place && polls && matches!(outcome, Attempt::Held(_)) {
            self.register(conn, name, waiting, terms).await?;
        }
        Ok(outcome)
    }

    /// Whether the acquire statement itself places, refreshes and removes the waiter entry
    /// (PostgreSQL, whose releases notify the waiter they grant the lock to); on the other
    /// dialects waiters read their place in line, where they find a grant a release made.
    pub(crate) fn acquire_keeps_entry(&self) -> bool {
        #[cfg(feature = "postgres")]
        return matches!(self, Db::Postgres(_));
        #[cfg(not(feature = "postgres"))]
        false
    }

    /// Releases `name` if `owner` holds it, on `conn` if given (to run after the statements
    /// already sent on it), else on a connection from the pool.
    pub(crate) async fn release(
        &self,
        conn: Option<Conn>,
        name: &str,
        owner: Owner,
    ) -> Result<bool, SqlError> {
        let mut conn = match conn {
            Some(conn) => conn,
            None => self.connection().await?,
        };
        let released =
            with_conn!(self, &mut conn, (db, conn) => db.release(conn, name, owner).await)?;
        self.reuse(conn);
        Ok(released)
    }

    /// Keeps `conn`, whose last statement completed with the server's answer, warm for the
    /// next statement (a connection given back to the pool costs a ping).
    pub(crate) fn reuse(&self, conn: Conn) {
        match (self, conn) {
            #[cfg(feature = "postgres")]
            (Db::Postgres(db), Conn::Postgres(conn)) => db.reuse(conn),
            #[cfg(feature = "mysql")]
            (Db::MySql(db), Conn::MySql(conn)) => db.reuse(conn),
            #[cfg(feature = "sqlite")]
            (Db::Sqlite(db), Conn::Sqlite(conn)) => db.reuse(conn),
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    /// A service renews its holds together, so as many renewals as holds can be in flight at
    /// once. The gathered dialects' renewals are small (an item handed to the batch); SQLite's
    /// runs a statement of its own and is boxed, so that a PostgreSQL or MySQL renewal does
    /// not carry its size. SQLite's goes out at once either way.
    pub(crate) async fn renew(
        &self,
        name: &str,
        owner: Owner,
        lease: Duration,
        sending: Sending,
    ) -> Result<bool, SqlError> {
        match self {
            #[cfg(feature = "postgres")]
            Db::Postgres(db) => db.renew(name, owner, lease, sending).await,
            #[cfg(feature = "mysql")]
            Db::MySql(db) => db.renew(name, owner, lease, sending).await,
            #[cfg(feature = "sqlite")]
            Db::Sqlite(db) => {
                let _ = sending;
                Box::pin(db.renew(name, owner, lease)).await
            }
        }
    }

    /// How many statements renewals have taken, where they are gathered (PostgreSQL, MySQL).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn renewal_statements(&self) -> Option<u64> {
        match self {
            #[cfg(feature = "postgres")]
            Db::Postgres(db) => Some(db.renewal_statements()),
            #[cfg(feature = "mysql")]
            Db::MySql(db) => Some(db.renewal_statements()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// How many statements releases have sent, where a release picks one of two (PostgreSQL:
    /// `release_alone.sql`, `release.sql`).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn release_statements(&self) -> Option<[u64; 2]> {
        match self {
            #[cfg(feature = "postgres")]
            Db::Postgres(db) => Some(db.release_statements()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// How many first tries on names not marked for waiters were sent as each statement,
    /// where a first try picks one of three (PostgreSQL: `acquire_free.sql`, `acquire_row.sql`,
    /// `take_row.sql`).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn first_try_statements(&self) -> Option<[u64; 3]> {
        match self {
            #[cfg(feature = "postgres")]
            Db::Postgres(db) => Some(db.first_try_statements()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Used by the test hook `SqlLock::sever` only.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) async fn sever(&self, name: &str) -> Result<bool, SqlError> {
        dispatch!(self, db => db.sever(name).await)
    }
}

/// The error of one direct connection attempt within `timeout`; `None` when it succeeded.
#[allow(dead_code)] // unused when neither server dialect is built
pub(crate) async fn connect_error<C: sqlx::Connection>(
    options: &C::Options,
    timeout: Duration,
) -> Option<SqlError> {
    match tokio::time::timeout(timeout, C::connect_with(options)).await {
        Ok(Ok(connection)) => {
            let _ = connection.close().await;
            None
        }
        Ok(Err(error)) => Some(SqlError::Sqlx(error)),
        Err(_elapsed) => Some(SqlError::TimedOut(timeout)),
    }
}

/// Closes a connection whose statement timed out: it may still be busy, or the server silent.
pub(crate) fn settle<DB: Database, T>(
    conn: &mut PoolConnection<DB>,
    result: Result<T, SqlError>,
) -> Result<T, SqlError> {
    if matches!(result, Err(SqlError::TimedOut(_))) {
        conn.close_on_drop();
    }
    result
}

/// A duration in whole units of `unit`, saturating.
pub(crate) fn whole(duration: Duration, unit: Duration) -> i64 {
    i64::try_from(duration.as_nanos() / unit.as_nanos()).unwrap_or(i64::MAX)
}

/// A fencing counter read from the database, which stores it signed.
pub(crate) fn fence(value: i64) -> Result<u64, SqlError> {
    u64::try_from(value).map_err(|_| {
        SqlError::Sqlx(sqlx::Error::Decode(
            format!("negative fencing counter {value} in the lock table").into(),
        ))
    })
}

/// A remaining lease read from the database; `None` when the row is gone.
pub(crate) fn remaining(value: Option<i64>, unit: Duration) -> Option<Duration> {
    value.map(|units| unit * u32::try_from(units.max(0)).unwrap_or(u32::MAX))
}
