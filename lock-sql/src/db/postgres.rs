//! PostgreSQL: `INSERT ... ON CONFLICT DO UPDATE ... WHERE ... RETURNING`, `pg_notify` on release.

use std::str::FromStr;
use std::time::Duration;

use lock_core::Result;
use lock_core::backend::Sending;
use sqlx::Row;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgConnectOptions;

mod acquire;
mod admin;
mod first_try;
mod renewals;

use super::claim_rows::{ClaimStatements, ClaimTarget};
use super::name_set::NameSet;
use super::pool::Stash;
use super::renewals::Renewals;
use super::{Owner, Schema, settle, statement};
use crate::error::{SqlError, invalid_url, timed};
use crate::settings::Settings;
use renewals::PgRenewer;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const MICROSECOND: Duration = Duration::from_micros(1);

/// SQLSTATEs of statements rolled back by contention: serialization failure, deadlock, lock
/// not available.
const CONTENDED: [&str; 3] = ["40001", "40P01", "55P03"];

/// The release statements, as [`PgDb::release_statements`] counts them: `release_alone.sql`
/// and `release.sql`.
const ALONE: usize = 0;
const FULL: usize = 1;

/// The first-try statements, as [`PgDb::first_try_statements`] counts them: `acquire_free.sql`,
/// `acquire_row.sql` and `take_row.sql`.
const UPSERT: usize = 0;
const ROW: usize = 1;
const TAKE: usize = 2;

/// `take_row.sql`, which `acquire_row.sql` also runs, in place of its `{take_row}`.
const TAKE_ROW: &str = include_str!("../../sql/postgres/take_row.sql");

/// SQLSTATE of a statement refused for want of a privilege.
const INSUFFICIENT_PRIVILEGE: &str = "42501";

/// A PostgreSQL pool and its statements.
#[derive(Debug)]
pub(crate) struct PgDb {
    claims: ClaimStatements,
    pool: Arc<Stash<sqlx::Postgres>>,
    renewals: Renewals<PgRenewer>,
    options: PgConnectOptions,
    channel: String,
    connect_timeout: Duration,
    timeout: Duration,
    sql: Statements,
    /// The names this service last found marked for waiters (a waiter was in line, or an
    /// entry may be live): their first tries and releases send the statements that read the
    /// line at once, rather than trying `acquire_free.sql` or `release_alone.sql` first.
    marked: NameSet,
    /// The names whose lock row this service saw exist: distlock never deletes a lock row, so
    /// a first try on one takes the row over with an `UPDATE` (`acquire_row.sql`; a bare one,
    /// `take_row.sql`, when the acquisition will wait), which the server runs for less than the
    /// upsert (`acquire_free.sql`) a row never seen needs. A row deleted behind our back (by an
    /// administrator) is found missing and forgotten.
    known_rows: NameSet,
    /// First tries sent: `acquire_free.sql`, `acquire_row.sql`, `take_row.sql`.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    first_tries: [AtomicU64; 3],
    /// Statements sent by releases: `release_alone.sql`, `release.sql`.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    release_sent: [AtomicU64; 2],
}

#[derive(Debug)]
struct Statements {
    schema: Schema,
    acquire: sqlx::SqlStr,
    acquire_first: sqlx::SqlStr,
    acquire_free: sqlx::SqlStr,
    acquire_row: sqlx::SqlStr,
    take_row: sqlx::SqlStr,
    release: sqlx::SqlStr,
    release_alone: sqlx::SqlStr,
    wait_leave: sqlx::SqlStr,
    inspect: sqlx::SqlStr,
    list: sqlx::SqlStr,
    force_release: sqlx::SqlStr,
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    sever: sqlx::SqlStr,
}

impl PgDb {
    pub(crate) fn new(config: &Settings) -> Result<Self> {
        let options = PgConnectOptions::from_str(&config.driver_url)
            .map_err(|e| invalid_url("PostgreSQL", e))?;
        let pool = Arc::new(Stash::new(
            super::pool::pool_options(config).connect_lazy_with(options.clone()),
        ));
        let renewer = PgRenewer {
            pool: Arc::clone(&pool),
            sql: statement(
                include_str!("../../sql/postgres/renew_all.sql"),
                &config.table,
                "",
            ),
            timeout: config.service.operation_timeout,
        };
        let table = &config.table;
        let sql = Statements {
            schema: Schema::new(
                [
                    include_str!("../../sql/postgres/schema.sql"),
                    include_str!("../../sql/postgres/tables.sql"),
                    include_str!("../../sql/postgres/columns.sql"),
                    include_str!("../../sql/postgres/upgrade.sql"),
                ],
                table,
                "",
            )
            .checking_privileges(table, '"', |error| {
                error
                    .as_database_error()
                    .and_then(|error| error.code())
                    .is_some_and(|code| code == INSUFFICIENT_PRIVILEGE)
            }),
            acquire: statement(include_str!("../../sql/postgres/acquire.sql"), table, ""),
            acquire_first: statement(
                include_str!("../../sql/postgres/acquire_first.sql"),
                table,
                "",
            ),
            acquire_free: statement(
                include_str!("../../sql/postgres/acquire_free.sql"),
                table,
                "",
            ),
            acquire_row: statement(
                &include_str!("../../sql/postgres/acquire_row.sql").replace("{take_row}", TAKE_ROW),
                table,
                "",
            ),
            take_row: statement(TAKE_ROW, table, ""),
            release: statement(include_str!("../../sql/postgres/release.sql"), table, ""),
            release_alone: statement(
                include_str!("../../sql/postgres/release_alone.sql"),
                table,
                "",
            ),
            wait_leave: statement(include_str!("../../sql/postgres/wait_leave.sql"), table, ""),
            inspect: statement(include_str!("../../sql/postgres/inspect.sql"), table, ""),
            list: statement(include_str!("../../sql/postgres/list.sql"), table, ""),
            force_release: statement(
                include_str!("../../sql/postgres/force_release.sql"),
                table,
                "",
            ),
            sever: statement(include_str!("../../sql/postgres/sever.sql"), table, ""),
        };
        Ok(Self {
            claims: ClaimStatements::new(
                [
                    include_str!("../../sql/postgres/claim_read.sql"),
                    include_str!("../../sql/postgres/claim_insert.sql"),
                    include_str!("../../sql/postgres/claim_update.sql"),
                ],
                table,
                "",
            )
            .waking(
                [
                    include_str!("../../sql/postgres/claim_update_waking.sql"),
                    include_str!("../../sql/postgres/claim_insert_waking.sql"),
                ],
                table,
            ),
            pool,
            renewals: Renewals::new(renewer),
            options,
            channel: table.as_str().to_owned(),
            connect_timeout: config.service.connect_timeout,
            timeout: config.service.operation_timeout,
            sql,
            marked: NameSet::default(),
            known_rows: NameSet::default(),
            first_tries: Default::default(),
            release_sent: Default::default(),
        })
    }

    /// What the notification listener needs: how to connect, the channel, the connect timeout.
    pub(crate) fn listener_source(&self) -> (PgConnectOptions, String, Duration) {
        (
            self.options.clone(),
            self.channel.clone(),
            self.connect_timeout,
        )
    }

    pub(crate) async fn diagnose(&self, timeout: Duration) -> Option<SqlError> {
        super::connect_error::<sqlx::PgConnection>(&self.options, timeout).await
    }

    pub(crate) fn claim_target(&self) -> ClaimTarget<'_, sqlx::Postgres> {
        ClaimTarget {
            pool: &self.pool,
            sql: &self.claims,
            timeout: self.timeout,
            channel: Some(&self.channel),
        }
    }

    pub(crate) async fn connection(&self) -> Result<PoolConnection<sqlx::Postgres>, SqlError> {
        Ok(self.pool.acquire().await?)
    }

    /// Keeps `conn`, whose statement completed, warm for the next statement.
    pub(crate) fn reuse(&self, conn: PoolConnection<sqlx::Postgres>) {
        self.pool.reuse(conn);
    }

    pub(crate) async fn ensure_schema(&self) -> Result<(), SqlError> {
        // Concurrent `CREATE TABLE IF NOT EXISTS` can fail on PostgreSQL's catalog unique
        // index; the table exists after that, so a retry succeeds. `ADD COLUMN IF NOT EXISTS`
        // needs nothing more: a concurrent one waits for the first and then finds the column.
        let mut tries = 0;
        loop {
            let mut conn = self.pool.acquire().await?;
            let result = self
                .sql
                .schema
                .apply(&mut conn, self.timeout, |_| false)
                .await;
            match result {
                Ok(()) => return Ok(()),
                Err(SqlError::Sqlx(sqlx::Error::Database(_))) if tries < 3 => tries += 1,
                Err(error) => return Err(error),
            }
        }
    }

    /// Ends our hold of `name`: `release_alone.sql` when no waiter is expected, which costs
    /// less; `release.sql`, which hands the lock to the first waiter, when this service last
    /// found the name marked for waiters, or when `release_alone.sql` found it marked.
    pub(crate) async fn release(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        name: &str,
        owner: Owner,
    ) -> Result<bool, SqlError> {
        if !self.marked.contains(name) {
            let alone = self.send_release(conn, &self.sql.release_alone, name, owner, ALONE);
            if alone.await?.is_some() {
                return Ok(true);
            }
        }
        let row = self.send_release(conn, &self.sql.release, name, owner, FULL);
        let Some(row) = row.await? else {
            return Ok(false);
        };
        if row.try_get::<bool, _>("waited")? || row.try_get::<bool, _>("marked")? {
            self.marked.insert(name);
        } else {
            self.marked.forget(name);
        }
        Ok(true)
    }

    /// Sends the release statement `sql`, of `kind` [`ALONE`] or [`FULL`]; its row, if the
    /// hold was ours. `release_alone.sql` takes no channel: it notifies nobody.
    async fn send_release(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        sql: &sqlx::SqlStr,
        name: &str,
        owner: Owner,
        kind: usize,
    ) -> Result<Option<sqlx::postgres::PgRow>, SqlError> {
        self.release_sent[kind].fetch_add(1, Ordering::Relaxed);
        let query = sqlx::query(sql.clone()).bind(name).bind(owner.as_bytes());
        let query = match kind {
            FULL => query.bind(self.channel.as_str()),
            _ => query,
        };
        let result = timed(self.timeout, query.fetch_optional(&mut **conn)).await;
        settle(conn, result)
    }

    /// How many statements this service's releases sent: `release_alone.sql`, `release.sql`.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn release_statements(&self) -> [u64; 2] {
        self.release_sent
            .each_ref()
            .map(|sent| sent.load(Ordering::Relaxed))
    }

    /// How many first tries this service sent on names not marked for waiters:
    /// `acquire_free.sql`, `acquire_row.sql`, `take_row.sql`.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn first_try_statements(&self) -> [u64; 3] {
        self.first_tries
            .each_ref()
            .map(|sent| sent.load(Ordering::Relaxed))
    }

    /// How many statements the renewals of this service's holds have taken.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn renewal_statements(&self) -> u64 {
        self.renewals.statements()
    }

    /// Extends our live hold of `name`, gathered with the renewals of this service's other
    /// holds into one `UPDATE` or alone (see [`Renewals`]).
    pub(crate) async fn renew(
        &self,
        name: &str,
        owner: Owner,
        lease: Duration,
        sending: Sending,
    ) -> Result<bool, SqlError> {
        self.renewals.renew(name, owner, lease, sending).await
    }

    pub(crate) async fn leave(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        let query = sqlx::query(self.sql.wait_leave.clone())
            .bind(name)
            .bind(waiter.as_bytes())
            .bind(self.channel.as_str());
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

fn contended(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|error| error.code())
        .is_some_and(|code| CONTENDED.contains(&code.as_ref()))
}
