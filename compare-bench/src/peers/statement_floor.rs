//! What the floors of distlock's own SQL statements share: their tables, made by lock-sql
//! itself so that they match its statements; those statements, read from lock-sql's files; and
//! the client, one bare connection sending them. Each dialect's file binds the arguments an
//! uncontended distlock acquisition sends and checks the outcome.

use std::sync::Arc;

use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_sql::sqlx::{AssertSqlSafe, Connection, SqlSafeStr, SqlStr};
use tokio::sync::Mutex;

use crate::BenchResult;

/// The lock table of the floors (their companion tables too), on each SQL server.
pub const TABLE: &str = "peer_statement_floor";

/// The lease the acquire statement asks for, as distlock's default, in microseconds.
pub const LEASE_US: i64 = 30_000_000;

/// One client (its own connection `C`) sending distlock's statements for one name.
#[derive(Debug)]
pub struct StatementFloor<C> {
    pub(super) connection: Arc<Mutex<C>>,
    pub(super) name: String,
    pub(super) acquire: SqlStr,
    pub(super) release: SqlStr,
}

impl<C> Clone for StatementFloor<C> {
    fn clone(&self) -> Self {
        Self {
            connection: Arc::clone(&self.connection),
            name: self.name.clone(),
            acquire: self.acquire.clone(),
            release: self.release.clone(),
        }
    }
}

/// A hold of a statement floor: its client and the owner token its acquire statement sent.
#[derive(Debug)]
pub struct StatementHeld<C> {
    pub(super) floor: StatementFloor<C>,
    pub(super) owner: [u8; 16],
}

impl<C: Connection> StatementFloor<C> {
    /// Makes the tables (through lock-sql, so they match its statements) and connects for the
    /// lock `name`, to send the statements of lock-sql's files `acquire` and `release`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connections it was opening; the tables, once made,
    /// stay.
    ///
    /// # Errors
    ///
    /// The connection's or the table's error.
    pub async fn connect(url: &str, name: &str, acquire: &str, release: &str) -> BenchResult<Self> {
        make_tables(url).await?;
        Ok(Self {
            connection: Arc::new(Mutex::new(C::connect(url).await?)),
            name: name.to_owned(),
            acquire: statement(acquire),
            release: statement(release),
        })
    }

    /// A hold by `owner`, once its acquire statement granted.
    pub(super) fn held(&self, owner: [u8; 16]) -> StatementHeld<C> {
        StatementHeld {
            floor: self.clone(),
            owner,
        }
    }
}

/// Makes the floor's tables on the server of `url` through lock-sql, as distlock would.
async fn make_tables(url: &str) -> BenchResult<()> {
    let tables = SqlLock::builder(&format!("{url}?table={TABLE}"))
        .connect()
        .await?;
    tables.acquire("floor/tables").await?.release().await?;
    Ok(())
}

/// A lock-sql statement for the floor's tables.
pub(super) fn statement(template: &str) -> SqlStr {
    // Without the whole-line comments, as lock-sql sends them.
    let code: Vec<&str> = template
        .lines()
        .filter(|line| !line.trim_start().starts_with("--"))
        .collect();
    let text = code
        .join("\n")
        .replace("{table}", TABLE)
        .replace("{waiters}", &format!("{TABLE}_waiters"));
    // Only the floor's constant table names are spliced in. Shared, as lock-sql's are: sqlx
    // clones the text for each execution, which copies an owned `String`.
    AssertSqlSafe(std::sync::Arc::<str>::from(text)).into_sql_str()
}
