//! The release of the MySQL/MariaDB statement floor, with lock-sql's statements: after a try of
//! the client was refused (a line formed), `release_grant.sql`, which frees the lock row and
//! grants it to the first waiter at once, until it finds nobody in line; otherwise
//! `release.sql`, and when that reports a waiter entry may be live, `grant_head.sql`. A grant
//! is followed by `KILL QUERY` of the waiter's parked connection.

use std::sync::Arc;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use lock_sql::sqlx::mysql::MySqlQueryResult;
use lock_sql::sqlx::{self, AssertSqlSafe, MySqlConnection, SqlSafeStr, SqlStr};

use super::mysql_statement_floor::number;
use super::statement_floor::{StatementHeld, statement};
use crate::BenchResult;
use crate::contend::Held;

/// A hold of the statement floor.
#[derive(Debug)]
pub struct MySqlFloorHeld {
    pub(super) held: StatementHeld<MySqlConnection>,
    /// Whether the client found a line since its last release found nobody in it.
    pub(super) lined: Arc<AtomicBool>,
}

/// `grant_head.sql`, sent after a `release.sql` that found a waiter entry may be live.
static GRANT_HEAD: LazyLock<SqlStr> =
    LazyLock::new(|| statement(include_str!("../../../lock-sql/sql/mysql/grant_head.sql")));

/// `release_grant.sql`: the release and the grant in one statement.
static RELEASE_GRANT: LazyLock<SqlStr> = LazyLock::new(|| {
    statement(include_str!(
        "../../../lock-sql/sql/mysql/release_grant.sql"
    ))
});

#[async_trait]
impl Held for MySqlFloorHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let floor = &self.held.floor;
        let owner = self.held.owner.as_slice();
        let mut connection = floor.connection.lock().await;
        let name = floor.name.as_bytes();
        if self.lined.load(Ordering::Relaxed) {
            let released = sqlx::query(RELEASE_GRANT.clone())
                .bind(name)
                .bind(owner)
                .bind(name)
                .bind(owner)
                .execute(&mut *connection)
                .await;
            return match held(released)? {
                0 => {
                    self.lined.store(false, Ordering::Relaxed);
                    Ok(())
                }
                1 => Ok(()), // the first waiter parks no connection
                parked => ring(&mut connection, parked - 1).await,
            };
        }
        let released = sqlx::query(floor.release.clone())
            .bind(name)
            .bind(owner)
            .execute(&mut *connection)
            .await;
        if held(released)? == 0 {
            return Ok(()); // nobody can be waiting
        }
        let granted = sqlx::query(GRANT_HEAD.clone())
            .bind(name)
            .bind(owner)
            .bind(name)
            .execute(&mut *connection)
            .await?;
        match granted.last_insert_id() {
            0 => Ok(()),
            sleeper => ring(&mut connection, sleeper).await,
        }
    }
}

/// A release statement's insert id, once it ended the floor's hold.
fn held(released: Result<MySqlQueryResult, sqlx::Error>) -> BenchResult<u64> {
    let released = released?;
    if released.rows_affected() != 1 {
        return Err("the statement floor's release found no hold".into());
    }
    Ok(released.last_insert_id())
}

/// Interrupts the first waiter's parked connection `sleeper`. One that is gone (1094) was
/// woken already.
async fn ring(connection: &mut MySqlConnection, sleeper: u64) -> BenchResult<()> {
    let kill = format!("KILL QUERY {sleeper}");
    let kill = sqlx::raw_sql(AssertSqlSafe(kill).into_sql_str());
    match kill.execute(connection).await {
        Err(error) if number(&error) != Some(1094) => Err(error.into()),
        _ => Ok(()),
    }
}
