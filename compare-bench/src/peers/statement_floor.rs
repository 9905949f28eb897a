//! What the floors of distlock's own SQL statements share: their tables, made by lock-sql
//! itself so that they match its statements, and those statements, read from lock-sql's files.

use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_sql::sqlx::{AssertSqlSafe, SqlSafeStr, SqlStr};

use crate::BenchResult;

/// The lock table of the floors (their companion tables too), on each SQL server.
pub const TABLE: &str = "peer_statement_floor";

/// The lease the acquire statement asks for, as distlock's default, in microseconds.
pub const LEASE_US: i64 = 30_000_000;

/// Makes the floor's tables on the server of `url` through lock-sql, as distlock would.
///
/// # Cancel safety
///
/// Cancel safe: the tables, once made, stay; making them again is harmless.
///
/// # Errors
///
/// lock-sql's error.
pub async fn make_tables(url: &str) -> BenchResult<()> {
    let tables = SqlLock::builder(&format!("{url}?table={TABLE}"))
        .connect()
        .await?;
    tables.acquire("floor/tables").await?.release().await?;
    Ok(())
}

/// A lock-sql statement for the floor's tables.
pub fn statement(template: &str) -> SqlStr {
    let text = template
        .replace("{table}", TABLE)
        .replace("{waiters}", &format!("{TABLE}_waiters"));
    // Only the floor's constant table names are spliced in.
    AssertSqlSafe(text).into_sql_str()
}
