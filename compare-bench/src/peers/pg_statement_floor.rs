//! The floor of distlock's own PostgreSQL statements: lock-sql's `acquire_first.sql` and
//! `release.sql`, prepared, sent by the simplest client (one connection, one statement each
//! way) with the arguments an uncontended distlock acquisition sends. It does the same server
//! work as distlock's pair (the upsert, the probe of the waiters table, the release's
//! notification) and nothing else on the client: no pool, no engine, no guard, no lease
//! scheduler. Uncontended only: it never waits.

use std::sync::Arc;

use async_trait::async_trait;
use lock_sql::sqlx::{self, Connection, PgConnection, SqlStr};
use tokio::sync::Mutex;

use super::statement_floor::{LEASE_US, TABLE, make_tables, statement};
use crate::BenchResult;
use crate::contend::{Contender, Held};

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
        make_tables(url).await?;
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
