//! The floor of distlock's own MySQL/MariaDB statements: lock-sql's `acquire.sql` and
//! `release.sql`, prepared, sent by the simplest client (one connection, one statement each
//! way) with the arguments an uncontended distlock acquisition sends. It does the same server
//! work as distlock's pair and nothing else on the client: no pool, no engine, no guard, no
//! lease scheduler. Uncontended only: it never waits.

use std::sync::Arc;

use async_trait::async_trait;
use lock_sql::sqlx::{self, Connection, MySqlConnection, SqlStr};
use tokio::sync::Mutex;

use super::statement_floor::{LEASE_US, make_tables, statement};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// Set in the acquire statement's insert id when it refused (see lock-sql's `acquire.sql`).
const REFUSED: u64 = 1 << 63;

/// One client (its own connection) sending distlock's statements for one name.
#[derive(Debug, Clone)]
pub struct MySqlStatementFloor {
    connection: Arc<Mutex<MySqlConnection>>,
    name: String,
    acquire: SqlStr,
    release: SqlStr,
}

impl MySqlStatementFloor {
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
            connection: Arc::new(Mutex::new(MySqlConnection::connect(url).await?)),
            name: name.to_owned(),
            acquire: statement(include_str!("../../../lock-sql/sql/mysql/acquire.sql")),
            release: statement(include_str!("../../../lock-sql/sql/mysql/release.sql")),
        })
    }
}

struct StatementHeld {
    floor: MySqlStatementFloor,
    owner: [u8; 16],
}

#[async_trait]
impl Contender for MySqlStatementFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = rand::random::<u128>().to_be_bytes();
        let (name, token, label) = (self.name.as_bytes(), owner.as_slice(), b"floor".as_slice());
        let mut connection = self.connection.lock().await;
        let outcome = sqlx::query(self.acquire.clone())
            .bind(name)
            .bind(token)
            .bind(LEASE_US)
            .bind(label)
            .bind(token)
            .bind(token)
            .bind(token)
            .bind(LEASE_US)
            .bind(token)
            .bind(label)
            .bind(token)
            .execute(&mut *connection)
            .await?
            .last_insert_id();
        if outcome == 0 || outcome & REFUSED != 0 {
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
