//! SQLite: `INSERT ... ON CONFLICT DO UPDATE ... WHERE ... RETURNING` on a WAL-mode file that
//! several processes share, with a busy timeout.

use std::str::FromStr;
use std::time::Duration;

use lock_core::Result;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};

mod admin;

use super::claim_rows::{ClaimStatements, ClaimTarget};
use super::pool::Stash;
use super::waiters::{Line, Terms};
use super::{Attempt, Owner, Schema, Waiting, fence, remaining, settle, statement, whole};
use crate::error::{SqlError, invalid_url, timed};
use crate::settings::Settings;

const MILLISECOND: Duration = Duration::from_millis(1);

/// The database clock: milliseconds since 1970, fixed for the duration of one statement.
const NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// Primary result codes of statements refused by contention: `SQLITE_BUSY`, `SQLITE_LOCKED`.
const CONTENDED: [i64; 2] = [5, 6];

/// A SQLite pool and its statements.
#[derive(Debug)]
pub(crate) struct LiteDb {
    claims: ClaimStatements,
    pool: Stash<sqlx::Sqlite>,
    timeout: Duration,
    sql: Statements,
}

#[derive(Debug)]
struct Statements {
    schema: Schema,
    acquire: sqlx::SqlStr,
    peek: sqlx::SqlStr,
    release: sqlx::SqlStr,
    renew: sqlx::SqlStr,
    wait_register: sqlx::SqlStr,
    wait_leave: sqlx::SqlStr,
    wait_probe: sqlx::SqlStr,
    inspect: sqlx::SqlStr,
    list: sqlx::SqlStr,
    force_release: sqlx::SqlStr,
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    sever: sqlx::SqlStr,
}

impl LiteDb {
    pub(crate) fn new(config: &Settings) -> Result<Self> {
        let memory = config.memory;
        let mut options = SqliteConnectOptions::from_str(&config.driver_url)
            .map_err(|e| invalid_url("SQLite", e))?
            .busy_timeout(config.service.operation_timeout.mul_f64(0.8));
        if !memory {
            // WAL lets readers and the one writer of a file shared by processes proceed
            // together; NORMAL sync is durable across process crashes, which is what a lock
            // table needs.
            options = options
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal);
        }
        let pool = super::pool::pool_options::<sqlx::Sqlite>(config);
        // An in-memory database lives as long as its one connection: never let it go.
        let pool = if memory {
            pool.idle_timeout(None).max_lifetime(None)
        } else {
            pool
        };
        let table = &config.table;
        let sql = Statements {
            schema: Schema::new(
                [
                    include_str!("../../sql/sqlite/schema.sql"),
                    include_str!("../../sql/sqlite/tables.sql"),
                    include_str!("../../sql/sqlite/columns.sql"),
                    include_str!("../../sql/sqlite/upgrade.sql"),
                ],
                table,
                NOW_MS,
            ),
            acquire: statement(include_str!("../../sql/sqlite/acquire.sql"), table, NOW_MS),
            peek: statement(include_str!("../../sql/sqlite/peek.sql"), table, NOW_MS),
            release: statement(include_str!("../../sql/sqlite/release.sql"), table, NOW_MS),
            renew: statement(include_str!("../../sql/sqlite/renew.sql"), table, NOW_MS),
            wait_register: statement(
                include_str!("../../sql/sqlite/wait_register.sql"),
                table,
                NOW_MS,
            ),
            wait_leave: statement(
                include_str!("../../sql/sqlite/wait_leave.sql"),
                table,
                NOW_MS,
            ),
            wait_probe: statement(
                include_str!("../../sql/sqlite/wait_probe.sql"),
                table,
                NOW_MS,
            ),
            inspect: statement(include_str!("../../sql/sqlite/inspect.sql"), table, NOW_MS),
            list: statement(include_str!("../../sql/sqlite/list.sql"), table, NOW_MS),
            force_release: statement(
                include_str!("../../sql/sqlite/force_release.sql"),
                table,
                NOW_MS,
            ),
            sever: statement(include_str!("../../sql/sqlite/sever.sql"), table, NOW_MS),
        };
        Ok(Self {
            claims: ClaimStatements::new(
                [
                    include_str!("../../sql/sqlite/claim_read.sql"),
                    include_str!("../../sql/sqlite/claim_insert.sql"),
                    include_str!("../../sql/sqlite/claim_update.sql"),
                ],
                table,
                NOW_MS,
            ),
            pool: Stash::new(pool.connect_lazy_with(options)),
            timeout: config.service.operation_timeout,
            sql,
        })
    }

    pub(crate) fn claim_target(&self) -> ClaimTarget<'_, sqlx::Sqlite> {
        ClaimTarget {
            pool: &self.pool,
            sql: &self.claims,
            timeout: self.timeout,
            channel: None,
        }
    }

    pub(crate) async fn connection(&self) -> Result<PoolConnection<sqlx::Sqlite>, SqlError> {
        Ok(self.pool.acquire().await?)
    }

    /// Keeps `conn`, whose statement completed, warm for the next statement.
    pub(crate) fn reuse(&self, conn: PoolConnection<sqlx::Sqlite>) {
        self.pool.reuse(conn);
    }

    /// Creates the tables if missing and adds the lock table's newer columns (the schema
    /// step). Processes opening a new file together contend for it:
    /// switching the file to WAL and `CREATE TABLE IF NOT EXISTS` (a schema read upgraded to a
    /// write) can be refused at once, without SQLite's busy handler, when another connection
    /// wrote in between. Such refusals are retried after a short jittered pause until the
    /// operation timeout.
    pub(crate) async fn ensure_schema(&self) -> Result<(), SqlError> {
        let deadline = lock_core::backend::Deadline::after(Some(self.timeout));
        loop {
            match self.try_schema().await {
                Err(SqlError::Sqlx(error))
                    if contended(&error) && !deadline.passed(tokio::time::Instant::now()) =>
                {
                    let pause = Duration::from_millis(rand::random_range(2..20));
                    tokio::time::sleep(pause).await;
                }
                outcome => return outcome,
            }
        }
    }

    /// One attempt: a connection (opening one switches a new file to WAL, which contends
    /// too) and the schema step's statements.
    async fn try_schema(&self) -> Result<(), SqlError> {
        let mut conn = self.pool.acquire().await?;
        self.sql
            .schema
            .apply(&mut conn, self.timeout, duplicate_column)
            .await
    }

    /// The upsert, granting only when no live waiter entry is ahead of `waiting`'s; placing
    /// and refreshing the entry is [`super::Db::acquire`]'s. A refusal reads the holder's
    /// lease next.
    pub(crate) async fn acquire(
        &self,
        conn: &mut PoolConnection<sqlx::Sqlite>,
        name: &str,
        owner: Owner,
        lease: Duration,
        label: &str,
        waiting: Waiting,
    ) -> Result<Attempt, SqlError> {
        let query = sqlx::query_scalar::<_, Option<i64>>(self.sql.acquire.clone())
            .bind(name)
            .bind(owner.as_bytes())
            .bind(whole(lease, MILLISECOND))
            .bind(label)
            .bind(waiting.id.as_bytes());
        let result = timed(self.timeout, query.fetch_optional(&mut **conn)).await;
        match settle(conn, result) {
            Err(SqlError::Sqlx(error)) if contended(&error) => Ok(Attempt::Contended),
            Err(error) => Err(error),
            Ok(Some(Some(granted))) => Ok(Attempt::Granted(fence(granted)?)),
            // No row: held. A row without a fence: inserted free, others being ahead.
            Ok(_) => {
                let peek = sqlx::query_scalar::<_, i64>(self.sql.peek.clone()).bind(name);
                let result = timed(self.timeout, peek.fetch_optional(&mut **conn)).await;
                match settle(conn, result) {
                    Ok(left) => Ok(Attempt::Held(remaining(left.or(Some(0)), MILLISECOND))),
                    Err(SqlError::Sqlx(error)) if contended(&error) => Ok(Attempt::Held(None)),
                    Err(error) => Err(error),
                }
            }
        }
    }

    /// Where the acquisition with entry `waiter` stands (see `wait_probe.sql`).
    pub(crate) async fn probe(
        &self,
        conn: &mut PoolConnection<sqlx::Sqlite>,
        name: &str,
        waiter: Owner,
        owner: Owner,
    ) -> Result<Line, SqlError> {
        let query = sqlx::query_as::<_, (Option<i64>, i64, bool)>(self.sql.wait_probe.clone())
            .bind(name)
            .bind(waiter.as_bytes())
            .bind(owner.as_bytes());
        let result = timed(self.timeout, query.fetch_one(&mut **conn)).await;
        Ok(Line::read(settle(conn, result)?, MILLISECOND))
    }

    pub(crate) async fn release(
        &self,
        conn: &mut PoolConnection<sqlx::Sqlite>,
        name: &str,
        owner: Owner,
    ) -> Result<bool, SqlError> {
        let query = sqlx::query(self.sql.release.clone())
            .bind(name)
            .bind(owner.as_bytes());
        let result = timed(self.timeout, query.execute(&mut **conn)).await;
        Ok(settle(conn, result)?.rows_affected() == 1)
    }

    pub(crate) async fn renew(
        &self,
        name: &str,
        owner: Owner,
        lease: Duration,
    ) -> Result<bool, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.renew.clone())
            .bind(name)
            .bind(owner.as_bytes())
            .bind(whole(lease, MILLISECOND));
        let result = timed(self.timeout, query.execute(&mut *conn)).await;
        let renewed = settle(&mut conn, result)?.rows_affected() == 1;
        self.pool.reuse(conn);
        Ok(renewed)
    }

    pub(crate) async fn register(
        &self,
        conn: &mut PoolConnection<sqlx::Sqlite>,
        name: &str,
        waiter: Owner,
        lifetime: Duration,
        terms: Terms<'_>,
    ) -> Result<(), SqlError> {
        let query = sqlx::query(self.sql.wait_register.clone())
            .bind(name)
            .bind(waiter.as_bytes())
            .bind(whole(lifetime, MILLISECOND))
            .bind(terms.owner.as_bytes())
            .bind(whole(terms.lease, MILLISECOND))
            .bind(terms.label);
        let result = timed(self.timeout, query.execute(&mut **conn)).await;
        settle(conn, result).map(drop)
    }

    pub(crate) async fn leave(
        &self,
        conn: &mut PoolConnection<sqlx::Sqlite>,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        let query = sqlx::query(self.sql.wait_leave.clone())
            .bind(name)
            .bind(waiter.as_bytes());
        let result = timed(self.timeout, query.execute(&mut **conn)).await;
        settle(conn, result).map(drop)
    }

    /// Used by the test hook `SqlLock::sever` only.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) async fn sever(&self, name: &str) -> Result<bool, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.sever.clone()).bind(name);
        let result = timed(self.timeout, query.execute(&mut *conn)).await;
        Ok(settle(&mut conn, result)?.rows_affected() > 0)
    }
}

/// An `ALTER TABLE ... ADD COLUMN` refused because another process added the column first.
fn duplicate_column(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|error| error.message().contains("duplicate column name"))
}

fn contended(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|error| error.code())
        .and_then(|code| code.parse::<i64>().ok())
        .is_some_and(|code| CONTENDED.contains(&(code & 0xff)))
}
