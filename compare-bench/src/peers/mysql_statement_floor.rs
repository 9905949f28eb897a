//! The floor of distlock's own MySQL/MariaDB statements: lock-sql's `acquire.sql` (the
//! upsert, for a row not seen yet), `acquire_row.sql` (the `UPDATE`, for a row seen) and
//! `release.sql`, prepared, sent by the simplest client (one connection, one statement each
//! way) with the arguments an uncontended distlock acquisition sends. It does the same server
//! work as distlock's pair and nothing else on the client: no pool, no engine, no guard, no
//! lease scheduler.
//!
//! Under contention it waits in line as a distlock acquisition does, with the same statements:
//! a first try that finds the lock free but marked for waiters sends `acquire_in_line.sql`
//! next; a refused first try marks the lock row (`wait_mark.sql`) and places a waiter entry
//! (`wait_register.sql`) naming its second connection and carrying its grant terms, which it
//! parks (`park.sql`, waiting for a user lock that a third connection holds, as lock-sql's
//! anchor) until a release interrupts it (`KILL QUERY`), the park's check finds its turn came
//! or the lock granted to it, or the park's second runs out (then it parks again); when woken
//! it reads whether a release granted it the lock (`handed.sql`), else tries as before, and a
//! grant after a wait removes the entry by its key (`wait_leave_granted.sql`). Its release
//! (see `mysql_floor_release`) grants the lock to the first waiter in the same statement
//! (`release_grant.sql`) once one of its tries was refused, until a release finds nobody in
//! line; otherwise it sends `release.sql`, and when that reports a waiter entry may be live,
//! grants the lock to the first waiter (`grant_head.sql`). A grant is followed by interrupting
//! the waiter's parked connection. Entries are not
//! refreshed:
//! they last 15 s, as distlock's, and a refresh every 5 s would add less than one statement
//! per waiter in a run.

use async_trait::async_trait;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use lock_sql::sqlx::mysql::{MySql, MySqlArguments, MySqlQueryResult};
use lock_sql::sqlx::query::Query;
use lock_sql::sqlx::{self, MySqlConnection, SqlStr};
use tokio::sync::Mutex;

use super::mysql_floor_release::MySqlFloorHeld;
use super::mysql_park::{hold_anchor, parked_connection};
use super::statement_floor::{LEASE_US, StatementFloor, statement};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// How long a waiter entry lasts unless refreshed, in microseconds: lock-sql's lifetime.
const ENTRY_LIFETIME_US: i64 = 15_000_000;

/// One client (its own connection) sending distlock's MySQL statements for one name.
#[derive(Debug, Clone)]
pub struct MySqlStatementFloor {
    floor: StatementFloor<MySqlConnection>,
    row: SqlStr,
    /// Whether a statement has reached the lock row, which then exists: as lock-sql, the
    /// first try sends `acquire_row.sql` from then on.
    known: Arc<AtomicBool>,
    in_line: SqlStr,
    mark: SqlStr,
    register: SqlStr,
    park: SqlStr,
    leave: SqlStr,
    handed: SqlStr,
    /// Whether one of its tries was refused since its last release found nobody in line: its
    /// release then grants in the same statement, as lock-sql's.
    lined: Arc<AtomicBool>,
    /// The connection it parks while it waits, and its id.
    sleeper: Arc<Mutex<MySqlConnection>>,
    sleeper_id: u64,
    /// The user lock its parks wait for, and the connection that holds it.
    anchor: String,
    _anchor_holder: Arc<MySqlConnection>,
}

/// Makes the tables and connects for the lock `name` on the MySQL/MariaDB server of `url`.
///
/// # Cancel safety
///
/// As [`StatementFloor::connect`].
///
/// # Errors
///
/// As [`StatementFloor::connect`].
pub async fn connect(url: &str, name: &str) -> BenchResult<MySqlStatementFloor> {
    let floor = StatementFloor::connect(
        url,
        name,
        include_str!("../../../lock-sql/sql/mysql/acquire.sql"),
        include_str!("../../../lock-sql/sql/mysql/release.sql"),
    )
    .await?;
    let (sleeper, sleeper_id) = parked_connection(url).await?;
    let (anchor, anchor_holder) = hold_anchor(url, "distlock-park").await?;
    Ok(MySqlStatementFloor {
        floor,
        row: statement(include_str!("../../../lock-sql/sql/mysql/acquire_row.sql")),
        known: Arc::new(AtomicBool::new(false)),
        in_line: statement(include_str!(
            "../../../lock-sql/sql/mysql/acquire_in_line.sql"
        )),
        mark: statement(include_str!("../../../lock-sql/sql/mysql/wait_mark.sql")),
        register: statement(include_str!(
            "../../../lock-sql/sql/mysql/wait_register.sql"
        )),
        park: statement(include_str!("../../../lock-sql/sql/mysql/park.sql")),
        leave: statement(include_str!(
            "../../../lock-sql/sql/mysql/wait_leave_granted.sql"
        )),
        handed: statement(include_str!("../../../lock-sql/sql/mysql/handed.sql")),
        lined: Arc::new(AtomicBool::new(false)),
        sleeper: Arc::new(Mutex::new(sleeper)),
        sleeper_id,
        anchor,
        _anchor_holder: Arc::new(anchor_holder),
    })
}

impl MySqlStatementFloor {
    /// A hold of `owner`, released as lock-sql releases.
    fn held(&self, owner: [u8; 16]) -> MySqlFloorHeld {
        MySqlFloorHeld {
            held: self.floor.held(owner),
            lined: Arc::clone(&self.lined),
        }
    }

    /// One try for `owner`, whose waiter entry is `waiter`: when the entry is `placed`, first
    /// `handed.sql`, which finds a grant a release made; then `acquire_row.sql` on a row seen
    /// (which takes up a grant a release made), then unless the entry is `placed`
    /// `acquire.sql` if the row was missing or not seen; `acquire_in_line.sql` when the lock
    /// was found free but marked for waiters, or the entry is placed and no grant was found. `true` when granted, `false` when the lock was held,
    /// others were ahead, or the server rolled the statement back for contention (as
    /// lock-sql, a refusal).
    async fn try_once(
        &self,
        connection: &mut MySqlConnection,
        owner: &[u8],
        (waiter, placed): (&[u8], bool),
    ) -> BenchResult<bool> {
        let name = self.floor.name.as_bytes();
        if placed {
            let handed = sqlx::query_scalar::<_, i64>(self.handed.clone())
                .bind(name)
                .bind(owner);
            if handed.fetch_optional(&mut *connection).await?.is_some() {
                return Ok(true);
            }
        }
        let granted = self
            .try_statements(connection, owner, (waiter, placed))
            .await?;
        if !granted {
            self.lined.store(true, Ordering::Relaxed);
        }
        Ok(granted)
    }

    /// The acquire statements of [`Self::try_once`].
    async fn try_statements(
        &self,
        connection: &mut MySqlConnection,
        owner: &[u8],
        (waiter, placed): (&[u8], bool),
    ) -> BenchResult<bool> {
        let name = self.floor.name.as_bytes();
        let mut found = None;
        if self.known.load(Ordering::Relaxed) {
            let row = sqlx::query(self.row.clone())
                .bind(owner)
                .bind(LEASE_US)
                .bind(LABEL)
                .bind(name)
                .bind(owner);
            found = row_outcome(row.execute(&mut *connection).await)?;
        }
        if found.is_none() && !placed {
            let acquire = bind_acquire(self.floor.acquire.clone(), name, owner, None);
            found = Some(outcome(acquire.execute(&mut *connection).await)?);
            self.known.store(true, Ordering::Relaxed);
        }
        match found {
            Some(Outcome::Granted) => return Ok(true),
            Some(Outcome::Refused) => return Ok(false),
            Some(Outcome::FreeButRefused) | None => {}
        }
        let acquire = bind_acquire(self.in_line.clone(), name, owner, Some(waiter));
        Ok(outcome(acquire.execute(&mut *connection).await)? == Outcome::Granted)
    }

    /// Parks the second connection while it is not the turn of the entry `waiter` and the
    /// lock is not granted to `owner`, for up to a second; `false` when it waited the whole
    /// second (the turn did not come).
    async fn park(&self, waiter: &[u8], owner: &[u8]) -> BenchResult<bool> {
        let name = self.floor.name.as_bytes();
        let mut sleeper = self.sleeper.lock().await;
        let parked: Result<(i64,), sqlx::Error> = sqlx::query_as(self.park.clone())
            .bind(name)
            .bind(owner)
            .bind(name)
            .bind(waiter)
            .bind(name)
            .bind(self.anchor.as_str())
            .bind(PARK_SECONDS)
            .fetch_one(&mut *sleeper)
            .await;
        match parked {
            Ok((2,)) => Err("a park took the anchor's lock: its connection ended".into()),
            Ok((slept,)) => Ok(slept != 0),
            Err(error) if interrupted(&error) => Ok(true),
            Err(error) => Err(error.into()),
        }
    }

    /// Marks the lock row, then places the entry `waiter` naming the parked connection, with
    /// `owner`'s grant terms.
    async fn place(
        &self,
        connection: &mut MySqlConnection,
        waiter: &[u8],
        owner: &[u8],
    ) -> BenchResult<()> {
        let name = self.floor.name.as_bytes();
        sqlx::query(self.mark.clone())
            .bind(name)
            .bind(ENTRY_LIFETIME_US)
            .bind(ENTRY_LIFETIME_US)
            .execute(&mut *connection)
            .await?;
        let sleeper = i64::try_from(self.sleeper_id)?;
        sqlx::query(self.register.clone())
            .bind(name)
            .bind(waiter)
            .bind(ENTRY_LIFETIME_US)
            .bind(sleeper)
            .bind(owner)
            .bind(LEASE_US)
            .bind(LABEL)
            .bind(ENTRY_LIFETIME_US)
            .bind(sleeper)
            .execute(&mut *connection)
            .await?;
        Ok(())
    }
}

#[async_trait]
impl Contender for MySqlStatementFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = rand::random::<u128>().to_be_bytes();
        let waiter = rand::random::<u128>().to_be_bytes();
        let mut connection = self.floor.connection.lock().await;
        if self
            .try_once(&mut connection, &owner, (&waiter, false))
            .await?
        {
            return Ok(Box::new(self.held(owner)));
        }
        self.place(&mut connection, &waiter, &owner).await?;
        loop {
            if self.park(&waiter, &owner).await?
                && self
                    .try_once(&mut connection, &owner, (&waiter, true))
                    .await?
            {
                break;
            }
        }
        sqlx::query(self.leave.clone())
            .bind(self.floor.name.as_bytes())
            .bind(waiter.as_slice())
            .execute(&mut *connection)
            .await?;
        Ok(Box::new(self.held(owner)))
    }
}

/// An acquire statement with the arguments an uncontended distlock acquisition sends: the row
/// to insert, then for `acquire_in_line.sql` the waiter entry (`line`) and the name, then the
/// update's.
fn bind_acquire<'a>(
    sql: SqlStr,
    name: &'a [u8],
    owner: &'a [u8],
    line: Option<&'a [u8]>,
) -> Query<'a, MySql, MySqlArguments> {
    let label = LABEL;
    let mut query = sqlx::query(sql)
        .bind(name)
        .bind(owner)
        .bind(LEASE_US)
        .bind(label);
    if let Some(waiter) = line {
        query = query.bind(waiter).bind(name);
    }
    query
        .bind(owner)
        .bind(owner)
        .bind(owner)
        .bind(LEASE_US)
        .bind(owner)
        .bind(label)
        .bind(owner)
}

/// The owner label the floor's holds carry.
const LABEL: &[u8] = b"floor";

/// What an acquire statement reported in its insert id (see lock-sql's `acquire.sql`).
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// A fence: a positive signed counter.
    Granted,
    /// The top bit and the holder's lease left, or rolled back by contention.
    Refused,
    /// The top bit alone: free, but a waiter entry may be live or is ahead.
    FreeButRefused,
}

fn outcome(attempt: Result<MySqlQueryResult, sqlx::Error>) -> BenchResult<Outcome> {
    match attempt {
        Ok(done) => match done.last_insert_id() {
            0 => Err("the acquire statement reported no outcome".into()),
            FREE_BUT_REFUSED => Ok(Outcome::FreeButRefused),
            id if id < FREE_BUT_REFUSED => Ok(Outcome::Granted),
            _ => Ok(Outcome::Refused),
        },
        Err(error) if contended(&error) => Ok(Outcome::Refused),
        Err(error) => Err(error.into()),
    }
}

/// `acquire_row.sql`'s outcome: `None` when it found no row (it matched none and set no
/// insert id).
fn row_outcome(attempt: Result<MySqlQueryResult, sqlx::Error>) -> BenchResult<Option<Outcome>> {
    match attempt {
        Ok(done) if done.rows_affected() == 0 && done.last_insert_id() == 0 => Ok(None),
        attempt => outcome(attempt).map(Some),
    }
}

/// The insert id's top bit, set when a try was refused.
const FREE_BUT_REFUSED: u64 = 1 << 63;

/// The longest one park sleeps, as lock-sql's.
const PARK_SECONDS: f64 = 1.0;

/// The server's error number, for an error the server reported.
pub(super) fn number(error: &sqlx::Error) -> Option<u16> {
    error
        .as_database_error()
        .and_then(|error| error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .map(sqlx::mysql::MySqlDatabaseError::number)
}

/// Rolled back by contention: "deadlock found" (1213) or "lock wait timeout" (1205).
fn contended(error: &sqlx::Error) -> bool {
    matches!(number(error), Some(1213 | 1205))
}

/// A parked statement that a release interrupted (1317).
fn interrupted(error: &sqlx::Error) -> bool {
    number(error) == Some(1317)
}
