//! MySQL and MariaDB: conditional assignments (`INSERT ... ON DUPLICATE KEY UPDATE` for a row
//! not seen yet, `UPDATE` for one seen), whose insert id reports the outcome.

use std::str::FromStr;
use std::time::Duration;

use lock_core::Result;
use lock_core::backend::Sending;
use sqlx::mysql::{MySqlConnectOptions, MySqlDatabaseError};
use sqlx::pool::PoolConnection;

mod acquire;
mod admin;
mod anchor;
mod line;
mod park_time;
mod release;
mod renewals;
#[cfg(feature = "testing")]
mod ring_probe;
mod sleepers;

pub(crate) use sleepers::{Bell, PARK_AT_MOST, Woken};

use super::claim_rows::{ClaimStatements, ClaimTarget};
use super::name_set::NameSet;
use super::pool::Stash;
use super::renewals::Renewals;
use super::waiters::Line;
use super::{Owner, Schema, settle, statement};
use crate::error::{SqlError, invalid_url, timed};
use crate::settings::Settings;
use renewals::MyRenewer;
use sleepers::Sleepers;
use std::sync::Arc;

const MICROSECOND: Duration = Duration::from_micros(1);

/// Error numbers of statements rolled back by contention: deadlock, lock wait timeout, and
/// interrupted (a release rings a waiter's parked connection by its id; one named by an entry
/// written before the server restarted may now be another of this user's connections).
const CONTENDED: [u16; 3] = [1213, 1205, 1317];

/// `ER_DUP_FIELDNAME`: the column being added exists already.
const DUPLICATE_COLUMN: u16 = 1060;

/// `ER_TABLEACCESS_DENIED_ERROR`, `ER_COLUMNACCESS_DENIED_ERROR`: a statement refused for want
/// of a privilege on a table or one of its columns.
const TABLE_ACCESS_DENIED: u16 = 1142;
const COLUMN_ACCESS_DENIED: u16 = 1143;

/// A MySQL or MariaDB pool and its statements.
#[derive(Debug)]
pub(crate) struct MyDb {
    claims: ClaimStatements,
    pool: Arc<Stash<sqlx::MySql>>,
    renewals: Renewals<MyRenewer>,
    options: MySqlConnectOptions,
    timeout: Duration,
    sql: Statements,
    /// The names whose lock row this service saw exist: distlock never deletes a lock row, so
    /// a try on one can take the row over with an `UPDATE` (`acquire_row.sql`), which InnoDB
    /// runs for less than the upsert (`acquire.sql`) a row never seen needs. A row deleted
    /// behind our back (by an administrator) is found missing by that `UPDATE` and forgotten.
    known_rows: NameSet,
    /// The names at which this service last found a line: one of its acquisitions found the
    /// lock held, and no release since found nobody in line. A release of such a name grants
    /// the lock to the first in line in the same statement (`release_grant.sql`); of any other,
    /// it frees the row alone and grants in a second statement only when the row says a
    /// waiter entry may be live (`release.sql`, `grant_head.sql`). Either way is correct; this
    /// only picks the cheaper one.
    lined: NameSet,
    /// Entries removed on a grant, which purge the name's expired entries every
    /// [`line::PURGE_EVERY`]th time.
    granted_leaves: std::sync::atomic::AtomicU64,
    /// The connections this service's waiters park, which releases interrupt.
    sleepers: Arc<Sleepers>,
}

#[derive(Debug)]
struct Statements {
    schema: Schema,
    acquire: sqlx::SqlStr,
    acquire_row: sqlx::SqlStr,
    acquire_in_line: sqlx::SqlStr,
    release: sqlx::SqlStr,
    grant_head: sqlx::SqlStr,
    release_grant: sqlx::SqlStr,
    handed: sqlx::SqlStr,
    wait_mark: sqlx::SqlStr,
    wait_register: sqlx::SqlStr,
    wait_leave: sqlx::SqlStr,
    wait_leave_granted: sqlx::SqlStr,
    wait_probe: sqlx::SqlStr,
    wake_next: sqlx::SqlStr,
    inspect: sqlx::SqlStr,
    list: sqlx::SqlStr,
    force_release: sqlx::SqlStr,
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    sever: sqlx::SqlStr,
}

impl MyDb {
    pub(crate) fn new(config: &Settings) -> Result<Self> {
        let options = MySqlConnectOptions::from_str(&config.driver_url)
            .map_err(|e| invalid_url("MySQL", e))?;
        let pool = Arc::new(Stash::new(
            super::pool::pool_options(config).connect_lazy_with(options.clone()),
        ));
        let table = &config.table;
        let renewer = MyRenewer {
            pool: Arc::clone(&pool),
            renew_all: statement(include_str!("../../sql/mysql/renew_all.sql"), table, ""),
            renewed: statement(include_str!("../../sql/mysql/renewed.sql"), table, ""),
            timeout: config.service.operation_timeout,
        };
        let sql = Statements {
            schema: Schema::new(
                [
                    include_str!("../../sql/mysql/schema.sql"),
                    include_str!("../../sql/mysql/tables.sql"),
                    include_str!("../../sql/mysql/columns.sql"),
                    include_str!("../../sql/mysql/upgrade.sql"),
                ],
                table,
                "",
            )
            .checking_privileges(table, '`', |error| {
                matches!(
                    number(error),
                    Some(TABLE_ACCESS_DENIED | COLUMN_ACCESS_DENIED)
                )
            }),
            acquire: statement(include_str!("../../sql/mysql/acquire.sql"), table, ""),
            acquire_row: statement(include_str!("../../sql/mysql/acquire_row.sql"), table, ""),
            acquire_in_line: statement(
                include_str!("../../sql/mysql/acquire_in_line.sql"),
                table,
                "",
            ),
            release: statement(include_str!("../../sql/mysql/release.sql"), table, ""),
            grant_head: statement(include_str!("../../sql/mysql/grant_head.sql"), table, ""),
            release_grant: statement(include_str!("../../sql/mysql/release_grant.sql"), table, ""),
            handed: statement(include_str!("../../sql/mysql/handed.sql"), table, ""),
            wait_mark: statement(include_str!("../../sql/mysql/wait_mark.sql"), table, ""),
            wait_register: statement(include_str!("../../sql/mysql/wait_register.sql"), table, ""),
            wait_leave: statement(include_str!("../../sql/mysql/wait_leave.sql"), table, ""),
            wait_leave_granted: statement(
                include_str!("../../sql/mysql/wait_leave_granted.sql"),
                table,
                "",
            ),
            wait_probe: statement(include_str!("../../sql/mysql/wait_probe.sql"), table, ""),
            wake_next: statement(include_str!("../../sql/mysql/wake_next.sql"), table, ""),
            inspect: statement(include_str!("../../sql/mysql/inspect.sql"), table, ""),
            list: statement(include_str!("../../sql/mysql/list.sql"), table, ""),
            force_release: statement(include_str!("../../sql/mysql/force_release.sql"), table, ""),
            sever: statement(include_str!("../../sql/mysql/sever.sql"), table, ""),
        };
        let sleepers = Sleepers::new(
            options.clone(),
            config.service.connect_timeout,
            config.service.operation_timeout,
            [
                statement(include_str!("../../sql/mysql/park.sql"), table, ""),
                statement(include_str!("../../sql/mysql/wait_sleeper.sql"), table, ""),
            ],
        );
        Ok(Self {
            claims: ClaimStatements::new(
                [
                    include_str!("../../sql/mysql/claim_read.sql"),
                    include_str!("../../sql/mysql/claim_insert.sql"),
                    include_str!("../../sql/mysql/claim_update.sql"),
                ],
                table,
                "",
            ),
            pool,
            renewals: Renewals::new(renewer),
            options,
            timeout: config.service.operation_timeout,
            sql,
            known_rows: NameSet::default(),
            lined: NameSet::default(),
            granted_leaves: std::sync::atomic::AtomicU64::new(0),
            sleepers: Arc::new(sleepers),
        })
    }

    pub(crate) async fn diagnose(&self, timeout: Duration) -> Option<SqlError> {
        super::connect_error::<sqlx::MySqlConnection>(&self.options, timeout).await
    }

    pub(crate) fn claim_target(&self) -> ClaimTarget<'_, sqlx::MySql> {
        ClaimTarget {
            pool: &self.pool,
            sql: &self.claims,
            timeout: self.timeout,
            channel: None,
        }
    }

    pub(crate) async fn connection(&self) -> Result<PoolConnection<sqlx::MySql>, SqlError> {
        Ok(self.pool.acquire().await?)
    }

    /// Keeps `conn`, whose statement completed, warm for the next statement.
    pub(crate) fn reuse(&self, conn: PoolConnection<sqlx::MySql>) {
        self.pool.reuse(conn);
    }

    pub(crate) async fn ensure_schema(&self) -> Result<(), SqlError> {
        let mut conn = self.pool.acquire().await?;
        self.sql
            .schema
            .apply(&mut conn, self.timeout, |error| {
                number(error) == Some(DUPLICATE_COLUMN)
            })
            .await
    }

    /// An idle connection for a waiter to park, without I/O.
    pub(crate) fn idle_bell(&self) -> Option<Bell> {
        self.sleepers.idle()
    }

    /// A connection for a waiter to park; `None` when the service parks as many as it may,
    /// or none could be opened.
    pub(crate) async fn bell(&self) -> Option<Bell> {
        self.sleepers.bell().await
    }

    /// Where the acquisition with entry `waiter` and owner token `owner` stands (see
    /// `wait_probe.sql`): a read that takes no lock.
    pub(crate) async fn probe(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        waiter: Owner,
        owner: Owner,
    ) -> Result<Line, SqlError> {
        let (name, waiter) = (name.as_bytes(), waiter.as_bytes());
        let query = sqlx::query_as::<_, (Option<i64>, i64, i64)>(self.sql.wait_probe.clone())
            .bind(name)
            .bind(waiter)
            .bind(name)
            .bind(name)
            .bind(waiter)
            .bind(name)
            .bind(owner.as_bytes());
        let result = timed(self.timeout, query.fetch_one(&mut **conn)).await;
        let (left, ahead, queued) = settle(conn, result)?;
        Ok(Line::read((left, ahead, queued != 0), MICROSECOND))
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

    /// After an acquisition left the line without the lock: rings the first waiter's parked
    /// connection while the lock is free (see `wake_next.sql`).
    pub(crate) async fn pass_on(&self, name: &str) -> Result<(), SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query_scalar::<_, i64>(self.sql.wake_next.clone())
            .bind(name.as_bytes())
            .bind(name.as_bytes());
        let result = timed(self.timeout, query.fetch_optional(&mut *conn)).await;
        let next = settle(&mut conn, result)?.and_then(|id| u64::try_from(id).ok());
        if let Some(sleeper) = next {
            let rung = sleepers::ring(&mut conn, sleeper, self.timeout).await;
            settle(&mut conn, rung)?;
        }
        self.pool.reuse(conn);
        Ok(())
    }

    /// Used by the test hook `SqlLock::sever` only.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) async fn sever(&self, name: &str) -> Result<bool, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.sever.clone()).bind(name.as_bytes());
        let result = timed(self.timeout, query.execute(&mut *conn)).await;
        Ok(settle(&mut conn, result)?.rows_affected() > 0)
    }
}

fn contended(error: &sqlx::Error) -> bool {
    number(error).is_some_and(|number| CONTENDED.contains(&number))
}

/// The server's error number, for an error the server reported.
fn number(error: &sqlx::Error) -> Option<u16> {
    error
        .as_database_error()
        .and_then(|error| error.try_downcast_ref::<MySqlDatabaseError>())
        .map(MySqlDatabaseError::number)
}
