//! The connections MySQL and MariaDB waiters park while they wait, and the ring that wakes one.
//!
//! Nothing on these servers tells a client that a row changed, but one session may end
//! another's statement: a waiting acquisition parks a connection of its own in one statement
//! that checks its turn and then waits (park.sql: for the service's anchor, a user lock held
//! elsewhere, see `anchor`), its waiter entry names that connection, and a release grants the
//! lock to the first waiter and interrupts its wait with `KILL QUERY` (grant_head.sql, sent
//! after the release, grants and names it).
//! So a handoff costs a fixed few statements however long the line, and a waiter far back
//! sends one statement per [`PARK_AT_MOST`] instead of reading its place at the line's pace.
//!
//! `KILL QUERY` needs no privilege between sessions of one database user; a release by
//! another user needs `CONNECTION ADMIN` (MariaDB), `CONNECTION_ADMIN` (MySQL) or `SUPER`,
//! and without it rings nobody: the waiter notices the release when its sleep ends, within
//! [`PARK_AT_MOST`]. A service parks at most [`PARKED_AT_MOST`] connections; waiters beyond
//! them read their place at the pace of the line (`crate::pace`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};
use sqlx::{AssertSqlSafe, Connection, SqlSafeStr, SqlStr};

use super::anchor::Anchor;
use super::park_time::park_seconds;
use super::{contended, number};
use crate::db::Owner;
use crate::error::{SqlError, timed};

/// The most connections one service parks at once, lent or idle.
const PARKED_AT_MOST: usize = 16;

/// The longest one parked statement sleeps.
pub(crate) const PARK_AT_MOST: Duration = Duration::from_secs(1);

/// `ER_QUERY_INTERRUPTED`: a statement ended by `KILL QUERY`.
const INTERRUPTED: u16 = 1317;

/// `ER_NO_SUCH_THREAD`: the connection to interrupt is gone.
const NO_SUCH_THREAD: u16 = 1094;

/// One service's parked connections and the statements they run.
#[derive(Debug)]
pub(crate) struct Sleepers {
    options: MySqlConnectOptions,
    connect_timeout: Duration,
    /// Bounds each statement beyond its own sleep.
    timeout: Duration,
    park: SqlStr,
    name_sleeper: SqlStr,
    state: Mutex<Parked>,
    /// Held while an anchor is being opened, so that waiters arriving together open one.
    anchoring: tokio::sync::Mutex<()>,
    /// Whether the server's `GET_LOCK` waits whole seconds only (MySQL), as its anchor found.
    whole_seconds: AtomicBool,
    /// Park statements sent, for lock-sql's tests.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    parks: AtomicU64,
}

#[derive(Debug, Default)]
struct Parked {
    /// Connections whose last statement completed, with their ids.
    idle: Vec<(MySqlConnection, u64)>,
    /// Connections open: idle, lent, or being opened.
    open: usize,
    /// The user lock parked connections wait for; `None` until opened, or once lost.
    anchor: Option<Anchor>,
}

/// How a parked statement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Woken {
    /// Its check found the lock free and nobody ahead, or granted to it: the turn came.
    Turn,
    /// A release interrupted it: the turn came, or is about to.
    Rung,
    /// It slept the whole time.
    SleptOut,
    /// The server rolled the statement naming the connection back for contention (a
    /// deadlock or a lock wait timeout among the line's statements) before the park began:
    /// the entry does not name this connection, so no release rings it. The connection is
    /// sound; the next park names it again.
    RolledBack,
}

impl Sleepers {
    pub(crate) fn new(
        options: MySqlConnectOptions,
        connect_timeout: Duration,
        timeout: Duration,
        [park, name_sleeper]: [SqlStr; 2],
    ) -> Self {
        Self {
            options,
            connect_timeout,
            timeout,
            park,
            name_sleeper,
            state: Mutex::new(Parked::default()),
            anchoring: tokio::sync::Mutex::new(()),
            whole_seconds: AtomicBool::new(false),
            parks: AtomicU64::new(0),
        }
    }

    fn state(&self) -> MutexGuard<'_, Parked> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An idle parked connection, without I/O; `None` when there is none, or no anchor.
    pub(crate) fn idle(self: &Arc<Self>) -> Option<Bell> {
        let mut state = self.state();
        let anchor = Arc::clone(state.anchor.as_ref()?.name());
        let (conn, id) = state.idle.pop()?;
        drop(state);
        Some(self.lend(conn, id, anchor))
    }

    /// The name of the service's anchor, opened first if there is none; `None` when it could
    /// not be opened.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: an anchor being opened when it is dropped is closed.
    async fn anchor(&self) -> Option<Arc<str>> {
        let current = |state: &Parked| state.anchor.as_ref().map(|a| Arc::clone(a.name()));
        if let Some(name) = current(&self.state()) {
            return Some(name);
        }
        let _opening = self.anchoring.lock().await;
        if let Some(name) = current(&self.state()) {
            return Some(name);
        }
        match Anchor::open(&self.options, self.connect_timeout).await {
            Ok(anchor) => {
                let name = Arc::clone(anchor.name());
                if !anchor.waits_fractions() {
                    self.whole_seconds.store(true, Ordering::Relaxed);
                }
                self.state().anchor = Some(anchor);
                Some(name)
            }
            Err(error) => {
                tracing::debug!(%error, "no anchor to park on; reading the line instead");
                None
            }
        }
    }

    /// The server's id of the anchor's connection, if one is open.
    #[cfg(feature = "testing")]
    pub(crate) fn anchor_id(&self) -> Option<u64> {
        self.state().anchor.as_ref().map(Anchor::id)
    }

    /// Parks as on a server whose `GET_LOCK` waits whole seconds (MySQL), whatever this one
    /// does.
    #[cfg(feature = "testing")]
    pub(crate) fn park_whole_seconds(&self) {
        self.whole_seconds.store(true, Ordering::Relaxed);
    }

    /// How many park statements this service's parked connections have sent.
    #[cfg(feature = "testing")]
    pub(crate) fn parks_sent(&self) -> u64 {
        self.parks.load(Ordering::Relaxed)
    }

    /// The anchor `name` was found free (its connection ended): the next bell opens another.
    fn anchor_lost(&self, name: &str) {
        let mut state = self.state();
        if state.anchor.as_ref().is_some_and(|a| &**a.name() == name) {
            state.anchor = None;
        }
    }

    /// A parked connection: an idle one, else a new one unless the service parks
    /// [`PARKED_AT_MOST`] already. `None` then, or when connecting failed.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropped while connecting, the connection is not counted.
    pub(crate) async fn bell(self: &Arc<Self>) -> Option<Bell> {
        let anchor = self.anchor().await?;
        {
            let mut state = self.state();
            if let Some((conn, id)) = state.idle.pop() {
                return Some(self.lend(conn, id, anchor));
            }
            if state.open >= PARKED_AT_MOST {
                return None;
            }
            state.open += 1;
        }
        let opening = Opening(self);
        let connect = async {
            let mut conn = MySqlConnection::connect_with(&self.options).await?;
            let (id,): (u64,) = sqlx::query_as("SELECT CONNECTION_ID()")
                .fetch_one(&mut conn)
                .await?;
            Ok::<_, sqlx::Error>((conn, id))
        };
        match timed(self.connect_timeout, connect).await {
            Ok((conn, id)) => {
                std::mem::forget(opening);
                Some(self.lend(conn, id, anchor))
            }
            Err(error) => {
                tracing::debug!(%error, "no connection to park; reading the line instead");
                None
            }
        }
    }

    fn lend(self: &Arc<Self>, conn: MySqlConnection, id: u64, anchor: Arc<str>) -> Bell {
        Bell {
            conn: Some(conn),
            id,
            anchor,
            home: Arc::clone(self),
            settled: true,
        }
    }
}

/// A connection being opened, counted until it is lent or given up.
struct Opening<'a>(&'a Sleepers);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.open = state.open.saturating_sub(1);
    }
}

/// One parked connection, lent to one waiting acquisition. Dropped, it returns to its
/// service's idle ones when its last statement completed, and is closed otherwise.
pub(crate) struct Bell {
    conn: Option<MySqlConnection>,
    id: u64,
    /// The user lock its parks wait for.
    anchor: Arc<str>,
    home: Arc<Sleepers>,
    /// Whether no statement is in flight on it.
    settled: bool,
}

impl std::fmt::Debug for Bell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bell").field("id", &self.id).finish()
    }
}

impl Bell {
    /// The server's id of the connection, which the waiter entry names.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Whether a park of `sleep` waits on the server at all (see [`park_seconds`]).
    pub(crate) fn parks_for(&self, sleep: Duration) -> bool {
        let whole = self.home.whole_seconds.load(Ordering::Relaxed);
        park_seconds(sleep.min(PARK_AT_MOST), whole).is_some()
    }

    /// Parks the connection for up to `sleep` (at most [`PARK_AT_MOST`]) while it is not the
    /// turn of the entry `waiter` of `name` and no release granted the lock to its owner token
    /// `owner`; first, with `name_it`, makes the entry name this
    /// connection (wait_sleeper.sql). It waits for the service's anchor lock, which it gets
    /// only if the anchor is gone: the bell is then spent. A `sleep` the server cannot wait
    /// (see [`Bell::parks_for`]) checks the turn and returns at once.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropped mid-statement, the connection is closed when the bell is dropped,
    /// and its sleep ends on the server within [`PARK_AT_MOST`].
    ///
    /// # Errors
    ///
    /// The connection failed or timed out, or the anchor is gone: the bell is spent, drop it.
    pub(crate) async fn park(
        &mut self,
        name: &str,
        waiter: Owner,
        owner: Owner,
        sleep: Duration,
        name_it: bool,
    ) -> Result<Woken, SqlError> {
        let Some(conn) = self.conn.as_mut() else {
            // Only `drop` takes the connection.
            return Err(SqlError::Sqlx(sqlx::Error::PoolClosed));
        };
        let home = &self.home;
        self.settled = false;
        if name_it {
            let query = sqlx::query(home.name_sleeper.clone())
                .bind(name.as_bytes())
                .bind(waiter.as_bytes());
            match timed(home.timeout, query.execute(&mut *conn)).await {
                Err(SqlError::Sqlx(error)) if number(&error) == Some(INTERRUPTED) => {
                    self.settled = true;
                    return Ok(Woken::Rung);
                }
                Err(SqlError::Sqlx(error)) if contended(&error) => {
                    self.settled = true;
                    return Ok(Woken::RolledBack);
                }
                other => other.map(drop)?,
            }
        }
        let sleep = sleep.min(PARK_AT_MOST);
        let whole = home.whole_seconds.load(Ordering::Relaxed);
        home.parks.fetch_add(1, Ordering::Relaxed);
        let query = sqlx::query_as::<_, (i64,)>(home.park.clone())
            .bind(name.as_bytes())
            .bind(owner.as_bytes())
            .bind(name.as_bytes())
            .bind(waiter.as_bytes())
            .bind(name.as_bytes())
            .bind(&*self.anchor)
            .bind(park_seconds(sleep, whole).unwrap_or(0.0));
        let woken = match timed(home.timeout + sleep, query.fetch_one(&mut *conn)).await {
            Ok((-1,)) => Woken::Turn,
            Ok((0,)) => Woken::SleptOut,
            Ok((1,)) => Woken::Rung,
            Err(SqlError::Sqlx(error)) if number(&error) == Some(INTERRUPTED) => Woken::Rung,
            Ok((parked,)) => {
                // It took the anchor's lock (2): the anchor is gone. Closed when dropped, this
                // connection frees the lock for the next.
                home.anchor_lost(&self.anchor);
                return Err(SqlError::Sqlx(sqlx::Error::Protocol(format!(
                    "a park reported {parked}: its anchor is gone"
                ))));
            }
            Err(error) => return Err(error),
        };
        self.settled = true;
        Ok(woken)
    }
}

impl Drop for Bell {
    fn drop(&mut self) {
        let mut state = self.home.state();
        match self.conn.take() {
            Some(conn) if self.settled => state.idle.push((conn, self.id)),
            _ => state.open = state.open.saturating_sub(1),
        }
    }
}

/// Interrupts the parked statement of connection `sleeper` (a release's first waiter), on
/// `conn`. A connection that is gone, or a user that may not interrupt it, rings nobody: that
/// waiter notices within [`PARK_AT_MOST`].
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-statement, `conn` may be left mid-reply; its caller settles it.
///
/// # Errors
///
/// The connection failed or timed out.
pub(crate) async fn ring(
    conn: &mut MySqlConnection,
    sleeper: u64,
    timeout: Duration,
) -> Result<(), SqlError> {
    // The id is a number: nothing else is spliced in. Sent as text, since `KILL` is not
    // prepared, and each id would otherwise fill the statement cache.
    let kill = AssertSqlSafe(format!("KILL QUERY {sleeper}")).into_sql_str();
    match timed(timeout, sqlx::raw_sql(kill).execute(&mut *conn)).await {
        Ok(_) => Ok(()),
        Err(SqlError::Sqlx(error)) if error.as_database_error().is_some() => {
            if number(&error) != Some(NO_SUCH_THREAD) {
                tracing::debug!(%error, sleeper, "could not wake the first waiter");
            }
            Ok(())
        }
        Err(error) => Err(error),
    }
}
