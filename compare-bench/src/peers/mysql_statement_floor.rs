//! The floor of distlock's own MySQL/MariaDB statements: lock-sql's `acquire.sql` and
//! `release.sql`, prepared, sent by the simplest client (one connection, one statement each
//! way) with the arguments an uncontended distlock acquisition sends. It does the same server
//! work as distlock's pair and nothing else on the client: no pool, no engine, no guard, no
//! lease scheduler. Uncontended only: it never waits.

use async_trait::async_trait;
use lock_sql::sqlx::{self, MySqlConnection};

use super::statement_floor::{LEASE_US, StatementFloor, StatementHeld};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One client (its own connection) sending distlock's MySQL statements for one name.
pub type MySqlStatementFloor = StatementFloor<MySqlConnection>;

/// Makes the tables and connects for the lock `name` on the MySQL/MariaDB server of `url`.
///
/// # Cancel safety
///
/// As [`StatementFloor::connect`].
///
/// # Errors
///
/// As [`StatementFloor::connect`].
pub async fn connect(url: &str, name: &str) -> BenchResult<MySqlStatementFloor> {
    StatementFloor::connect(
        url,
        name,
        include_str!("../../../lock-sql/sql/mysql/acquire.sql"),
        include_str!("../../../lock-sql/sql/mysql/release.sql"),
    )
    .await
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
        // A grant reports its fence, a positive signed counter; a refusal sets the top bit
        // (see lock-sql's `acquire.sql`), and 0 reports nothing.
        if outcome == 0 || i64::try_from(outcome).is_err() {
            return Err("the statement floor's lock was held: it runs uncontended only".into());
        }
        Ok(Box::new(self.held(owner)))
    }
}

#[async_trait]
impl Held for StatementHeld<MySqlConnection> {
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
