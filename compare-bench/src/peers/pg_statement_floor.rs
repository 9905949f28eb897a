//! The floor of distlock's own PostgreSQL statements: lock-sql's `acquire_first.sql` and
//! `release.sql`, prepared, sent by the simplest client (one connection, one statement each
//! way) with the arguments an uncontended distlock acquisition sends. It does the same server
//! work as distlock's pair (the upsert, the probe of the waiters table, the release's
//! notification) and nothing else on the client: no pool, no engine, no guard, no lease
//! scheduler. Uncontended only: it never waits.

use std::sync::Arc;

use async_trait::async_trait;
use lock_core::DistributedLockExt;
use lock_sql::SqlLock;
use lock_sql::sqlx::{self, AssertSqlSafe, Connection, PgConnection, SqlSafeStr, SqlStr};
use tokio::sync::Mutex;

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// The lock table of the floor, made by lock-sql itself (its companion tables too).
const TABLE: &str = "peer_statement_floor";

/// The lease the acquire statement asks for, as distlock's default, in microseconds.
const LEASE_US: i64 = 30_000_000;

/// One client (its own connection) sending distlock's statements for one name.
#[derive(Debug, Clone)]
pub struct PgStatementFloor {
    connection: Arc<Mutex<PgConnection>>,
    name: String,
    acquire: SqlStr,
    release: SqlStr,
}

impl PgStatementFloor {
    /// Makes the tables (through lock-sql, so they match its statements) and connects for the
    /// lock `name`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connections it was opening; the tables, once made,
    /// stay.
    ///
    /// # Errors
    ///
    /// The connection's or the table's error.
    pub async fn connect(url: &str, name: &str) -> BenchResult<Self> {
        let tables = SqlLock::builder(&format!("{url}?table={TABLE}"))
            .connect()
            .await?;
        tables.acquire("floor/tables").await?.release().await?;
        Ok(Self {
            connection: Arc::new(Mutex::new(PgConnection::connect(url).await?)),
            name: name.to_owned(),
            acquire: statement(include_str!(
                "../../../lock-sql/sql/postgres/acquire_first.sql"
            )),
            release: statement(include_str!("../../../lock-sql/sql/postgres/release.sql")),
        })
    }
}

/// A lock-sql statement for the floor's tables.
fn statement(template: &str) -> SqlStr {
    let text = template
        .replace("{table}", TABLE)
        .replace("{waiters}", &format!("{TABLE}_waiters"));
    // Only the floor's constant table names are spliced in.
    AssertSqlSafe(text).into_sql_str()
}

struct StatementHeld {
    floor: PgStatementFloor,
    owner: [u8; 16],
}

#[async_trait]
impl Contender for PgStatementFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = rand::random::<u128>().to_be_bytes();
        let mut connection = self.connection.lock().await;
        let fence: Option<i64> = sqlx::query_scalar(self.acquire.clone())
            .bind(&self.name)
            .bind(owner.as_slice())
            .bind(LEASE_US)
            .bind("floor")
            .fetch_one(&mut *connection)
            .await?;
        if fence.is_none() {
            return Err("the statement floor's lock was held: it runs uncontended only".into());
        }
        Ok(Box::new(StatementHeld {
            floor: self.clone(),
            owner,
        }))
    }
}

#[async_trait]
impl Held for StatementHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.floor.connection.lock().await;
        let released = sqlx::query(self.floor.release.clone())
            .bind(&self.floor.name)
            .bind(self.owner.as_slice())
            .bind(TABLE)
            .fetch_optional(&mut *connection)
            .await?;
        if released.is_none() {
            return Err("the statement floor's release found no hold".into());
        }
        Ok(())
    }
}
