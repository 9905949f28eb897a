//! The claims table's statements, the same shape on every dialect: read a row (with the
//! database clock), insert a first row, compare-and-set a row by its version (on PostgreSQL,
//! also in a form that notifies waiters in the same statement). Written once, generic over the
//! driver; each dialect supplies its statement texts.

use std::time::Duration;

use sqlx::pool::PoolConnection;

use super::pool::Stash;
use sqlx::{Database, Decode, Encode, Executor, IntoArguments, Row, SqlStr, Type};

use super::{Db, settle, statement};
use crate::TableName;
use crate::error::{SqlError, timed};

/// One dialect's claim statements, with the table names and clock filled in.
#[derive(Debug)]
pub(crate) struct ClaimStatements {
    read: SqlStr,
    insert: SqlStr,
    update: SqlStr,
    /// The update and the insert that also wake waiters and observers in every process
    /// (PostgreSQL: a notification), binding the channel last.
    waking: Option<Waking>,
}

#[derive(Debug)]
struct Waking {
    update: SqlStr,
    insert: SqlStr,
}

impl ClaimStatements {
    /// `[read, insert, update]` templates for `table`, with the dialect's clock `now`.
    pub(crate) fn new(texts: [&str; 3], table: &TableName, now: &str) -> Self {
        let [read, insert, update] = texts.map(|text| statement(text, table, now));
        Self {
            read,
            insert,
            update,
            waking: None,
        }
    }

    /// With an update and an insert that wake waiters, from `[update, insert]` templates.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn waking(mut self, texts: [&str; 2], table: &TableName) -> Self {
        let [update, insert] = texts.map(|text| statement(text, table, ""));
        self.waking = Some(Waking { update, insert });
        self
    }
}

/// A claim row as read: its state and version (`None` before the first acquisition of the
/// name and kind) and the database clock in microseconds.
#[derive(Debug)]
pub(crate) struct ClaimRead {
    pub(crate) row: Option<(Vec<u8>, i64)>,
    pub(crate) now_us: i64,
}

/// What a claim statement needs of its dialect.
pub(crate) struct ClaimTarget<'a, DB: Database> {
    pub(crate) pool: &'a Stash<DB>,
    pub(crate) sql: &'a ClaimStatements,
    pub(crate) timeout: Duration,
    /// The notification channel, where an update can wake waiters.
    pub(crate) channel: Option<&'a str>,
}

impl Db {
    pub(crate) async fn read_claims(&self, name: &str, kind: &str) -> Result<ClaimRead, SqlError> {
        dispatch!(self, db => read(db.claim_target(), name, kind).await)
    }

    /// Writes `state` over the row read at `version` (`None`: inserts the first row); whether
    /// it was written (`false`: another change came first). With `wake`, an update wakes the
    /// name's waiters in every process where the dialect can (PostgreSQL, in the same
    /// statement, whose notification is sent when it commits).
    pub(crate) async fn write_claims(
        &self,
        (name, kind): (&str, &str),
        state: &[u8],
        (version, wake): (Option<i64>, bool),
    ) -> Result<bool, SqlError> {
        dispatch!(self, db => write(db.claim_target(), (name, kind), state, (version, wake)).await)
    }
}

async fn connection<DB: Database>(
    target: &ClaimTarget<'_, DB>,
) -> Result<PoolConnection<DB>, SqlError> {
    Ok(target.pool.acquire().await?)
}

async fn read<DB>(
    target: ClaimTarget<'_, DB>,
    name: &str,
    kind: &str,
) -> Result<ClaimRead, SqlError>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    <DB as Database>::Arguments: IntoArguments<DB>,
    for<'t> &'t str: Encode<'t, DB> + Type<DB>,
    for<'r> Option<Vec<u8>>: Decode<'r, DB> + Type<DB>,
    for<'r> Option<i64>: Decode<'r, DB> + Type<DB>,
    for<'r> i64: Decode<'r, DB> + Type<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let mut conn = connection(&target).await?;
    let query = sqlx::query::<DB>(target.sql.read.clone())
        .bind(name)
        .bind(kind);
    let result = timed(target.timeout, query.fetch_one(&mut *conn)).await;
    let row = settle(&mut conn, result)?;
    let state: Option<Vec<u8>> = row.try_get(0)?;
    let version: Option<i64> = row.try_get(1)?;
    Ok(ClaimRead {
        row: state.zip(version),
        now_us: row.try_get(2)?,
    })
}

async fn write<DB>(
    target: ClaimTarget<'_, DB>,
    (name, kind): (&str, &str),
    state: &[u8],
    (version, wake): (Option<i64>, bool),
) -> Result<bool, SqlError>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    <DB as Database>::Arguments: IntoArguments<DB>,
    for<'t> &'t str: Encode<'t, DB> + Type<DB>,
    for<'t> &'t [u8]: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
    DB::QueryResult: RowsAffected,
{
    let mut conn = connection(&target).await?;
    let waking = target
        .sql
        .waking
        .as_ref()
        .zip(target.channel)
        .filter(|_| wake);
    let query = match (version, waking) {
        (None, Some((waking, channel))) => sqlx::query::<DB>(waking.insert.clone())
            .bind(name)
            .bind(kind)
            .bind(state)
            .bind(channel),
        (None, None) => sqlx::query::<DB>(target.sql.insert.clone())
            .bind(name)
            .bind(kind)
            .bind(state),
        (Some(version), Some((waking, channel))) => sqlx::query::<DB>(waking.update.clone())
            .bind(state)
            .bind(name)
            .bind(kind)
            .bind(version)
            .bind(channel),
        (Some(version), _) => sqlx::query::<DB>(target.sql.update.clone())
            .bind(state)
            .bind(name)
            .bind(kind)
            .bind(version),
    };
    let result = timed(target.timeout, query.execute(&mut *conn)).await;
    let done = settle(&mut conn, result)?;
    Ok(done.rows_affected() == 1)
}

/// The count of rows a statement changed (matched, on MySQL; returned, for PostgreSQL's
/// waking update), which every driver reports in a type of its own.
pub(crate) trait RowsAffected {
    fn rows_affected(&self) -> u64;
}

#[cfg(feature = "postgres")]
impl RowsAffected for sqlx::postgres::PgQueryResult {
    fn rows_affected(&self) -> u64 {
        self.rows_affected()
    }
}

#[cfg(feature = "mysql")]
impl RowsAffected for sqlx::mysql::MySqlQueryResult {
    fn rows_affected(&self) -> u64 {
        self.rows_affected()
    }
}

#[cfg(feature = "sqlite")]
impl RowsAffected for sqlx::sqlite::SqliteQueryResult {
    fn rows_affected(&self) -> u64 {
        self.rows_affected()
    }
}
