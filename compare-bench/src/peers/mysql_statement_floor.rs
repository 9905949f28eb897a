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
//! (`wait_register.sql`); then it reads its place in line (`wait_probe.sql`), at once again
//! while it is first and after one millisecond per entry ahead otherwise, and sends
//! `acquire_in_line.sql` when its turn came; a grant after a wait removes the entry
//! (`wait_leave.sql`). It never reads less often than distlock, whose
//! waits also double while the line stands still. Entries are not refreshed: they last 15 s,
//! as distlock's, and a refresh every 5 s would add less than one statement per waiter in a
//! run.

use async_trait::async_trait;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lock_sql::sqlx::mysql::{MySql, MySqlArguments, MySqlQueryResult};
use lock_sql::sqlx::query::Query;
use lock_sql::sqlx::{self, MySqlConnection, SqlStr};

use super::statement_floor::{LEASE_US, StatementFloor, StatementHeld, statement};
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
    probe: SqlStr,
    leave: SqlStr,
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
        probe: statement(include_str!("../../../lock-sql/sql/mysql/wait_probe.sql")),
        leave: statement(include_str!("../../../lock-sql/sql/mysql/wait_leave.sql")),
    })
}

impl MySqlStatementFloor {
    /// One try for `owner`, whose waiter entry is `waiter`: unless the entry is `placed`,
    /// `acquire_row.sql` on a row seen (then `acquire.sql` if it was missing) or `acquire.sql`;
    /// `acquire_in_line.sql` when the entry is placed or the lock was found free but marked
    /// for waiters. `true` when granted, `false` when the lock was held,
    /// others were ahead, or the server rolled the statement back for contention (as
    /// lock-sql, a refusal).
    async fn try_once(
        &self,
        connection: &mut MySqlConnection,
        owner: &[u8],
        (waiter, placed): (&[u8], bool),
    ) -> BenchResult<bool> {
        let name = self.floor.name.as_bytes();
        if !placed {
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
            if found.is_none() {
                let acquire = bind_acquire(self.floor.acquire.clone(), name, owner, None);
                found = Some(outcome(acquire.execute(&mut *connection).await)?);
                self.known.store(true, Ordering::Relaxed);
            }
            match found.ok_or("no acquire statement ran")? {
                Outcome::Granted => return Ok(true),
                Outcome::Refused => return Ok(false),
                Outcome::FreeButRefused => {}
            }
        }
        let acquire = bind_acquire(self.in_line.clone(), name, owner, Some(waiter));
        Ok(outcome(acquire.execute(&mut *connection).await)? == Outcome::Granted)
    }

    /// The wait before the next try of the acquisition with entry `waiter`, read from its place
    /// in line; `None` when its turn came (the lock is free and no live entry is ahead).
    async fn wait_in_line(
        &self,
        connection: &mut MySqlConnection,
        waiter: &[u8],
    ) -> BenchResult<Option<Duration>> {
        let name = self.floor.name.as_bytes();
        let (left, ahead, _queued): (Option<i64>, i64, i64) = sqlx::query_as(self.probe.clone())
            .bind(name)
            .bind(waiter)
            .bind(name)
            .bind(name)
            .bind(waiter)
            .fetch_one(&mut *connection)
            .await?;
        if ahead == 0 && left.is_none() {
            return Ok(None);
        }
        let behind_the_next = u64::try_from(ahead).unwrap_or(0).saturating_sub(1);
        Ok(Some(Duration::from_millis(behind_the_next)))
    }

    /// Sends the waiter statement `sql` for the entry `waiter`, with the arguments `extra`
    /// (the lifetime, twice, when placing).
    async fn entry(
        &self,
        connection: &mut MySqlConnection,
        sql: &SqlStr,
        waiter: &[u8],
        extra: &[i64],
    ) -> BenchResult<()> {
        let mut query = sqlx::query(sql.clone())
            .bind(self.floor.name.as_bytes())
            .bind(waiter);
        for value in extra {
            query = query.bind(*value);
        }
        query.execute(&mut *connection).await?;
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
            return Ok(Box::new(self.floor.held(owner)));
        }
        let lifetime = [ENTRY_LIFETIME_US, ENTRY_LIFETIME_US];
        sqlx::query(self.mark.clone())
            .bind(self.floor.name.as_bytes())
            .bind(ENTRY_LIFETIME_US)
            .bind(ENTRY_LIFETIME_US)
            .execute(&mut *connection)
            .await?;
        self.entry(&mut connection, &self.register, &waiter, &lifetime)
            .await?;
        loop {
            match self.wait_in_line(&mut connection, &waiter).await? {
                // A timer, even one due now, fires on the runtime's next tick.
                Some(wait) if wait.is_zero() => {}
                Some(wait) => tokio::time::sleep(wait).await,
                None if self
                    .try_once(&mut connection, &owner, (&waiter, true))
                    .await? =>
                {
                    break;
                }
                None => {}
            }
        }
        self.entry(&mut connection, &self.leave, &waiter, &[])
            .await?;
        Ok(Box::new(self.floor.held(owner)))
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

/// Rolled back by contention: "deadlock found" (1213) or "lock wait timeout" (1205).
fn contended(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|error| error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .is_some_and(|error| matches!(error.number(), 1213 | 1205))
}

#[async_trait]
impl Held for StatementHeld<MySqlConnection> {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.floor.connection.lock().await;
        let released = sqlx::query(self.floor.release.clone())
            .bind(self.floor.name.as_bytes())
            .bind(self.owner.as_slice())
            .execute(&mut *connection)
            .await?;
        if released.rows_affected() != 1 {
            return Err("the statement floor's release found no hold".into());
        }
        Ok(())
    }
}
