//! The floor of distlock's own MySQL/MariaDB statements: lock-sql's `acquire.sql` and
//! `release.sql`, prepared, sent by the simplest client (one connection, one statement each
//! way) with the arguments an uncontended distlock acquisition sends. It does the same server
//! work as distlock's pair and nothing else on the client: no pool, no engine, no guard, no
//! lease scheduler.
//!
//! Under contention it waits as a distlock acquisition does, with the same statements: the
//! first refused try places a waiter entry (`wait_register.sql`), each later try follows
//! distlock's default backoff (the server wakes no one, so waiters poll), and a grant after a
//! wait removes the entry (`wait_leave.sql`). Entries are not refreshed: they last 15 s, as
//! distlock's, and a refresh every 5 s would add less than one statement per waiter in a run.

use async_trait::async_trait;
use lock_core::Backoff;
use lock_sql::sqlx::{self, MySqlConnection, SqlStr};

use super::statement_floor::{LEASE_US, StatementFloor, StatementHeld, statement};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// How long a waiter entry lasts unless refreshed, in microseconds: lock-sql's lifetime.
const ENTRY_LIFETIME_US: i64 = 15_000_000;

/// One client (its own connection) sending distlock's MySQL statements for one name.
#[derive(Debug, Clone)]
pub struct MySqlStatementFloor {
    floor: StatementFloor<MySqlConnection>,
    register: SqlStr,
    leave: SqlStr,
}

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
    let floor = StatementFloor::connect(
        url,
        name,
        include_str!("../../../lock-sql/sql/mysql/acquire.sql"),
        include_str!("../../../lock-sql/sql/mysql/release.sql"),
    )
    .await?;
    Ok(MySqlStatementFloor {
        floor,
        register: statement(include_str!(
            "../../../lock-sql/sql/mysql/wait_register.sql"
        )),
        leave: statement(include_str!("../../../lock-sql/sql/mysql/wait_leave.sql")),
    })
}

impl MySqlStatementFloor {
    /// One acquire statement for `owner`: `true` when it granted, `false` when the lock was
    /// held or the server rolled the statement back for contention (as lock-sql, a refusal).
    async fn try_once(&self, connection: &mut MySqlConnection, owner: &[u8]) -> BenchResult<bool> {
        let (name, label) = (self.floor.name.as_bytes(), b"floor".as_slice());
        let attempt = sqlx::query(self.floor.acquire.clone())
            .bind(name)
            .bind(owner)
            .bind(LEASE_US)
            .bind(label)
            .bind(owner)
            .bind(owner)
            .bind(owner)
            .bind(LEASE_US)
            .bind(owner)
            .bind(label)
            .bind(owner)
            .execute(&mut *connection)
            .await;
        let outcome = match attempt {
            Ok(done) => done.last_insert_id(),
            Err(error) if contended(&error) => return Ok(false),
            Err(error) => return Err(error.into()),
        };
        // A grant reports its fence, a positive signed counter; a refusal sets the top bit
        // (see lock-sql's `acquire.sql`), and 0 reports nothing.
        match i64::try_from(outcome) {
            Ok(0) => Err("the acquire statement reported no outcome".into()),
            Ok(_) => Ok(true),
            Err(_) => Ok(false),
        }
    }

    /// Sends the waiter statement `sql` for the entry `waiter`, with the arguments `extra`
    /// (the lifetime, twice, when placing).
    async fn entry(
        &self,
        connection: &mut MySqlConnection,
        sql: &SqlStr,
        waiter: &[u8],
        extra: &[i64],
    ) -> BenchResult<()> {
        let mut query = sqlx::query(sql.clone())
            .bind(self.floor.name.as_bytes())
            .bind(waiter);
        for value in extra {
            query = query.bind(*value);
        }
        query.execute(&mut *connection).await?;
        Ok(())
    }
}

#[async_trait]
impl Contender for MySqlStatementFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = rand::random::<u128>().to_be_bytes();
        let waiter = rand::random::<u128>().to_be_bytes();
        let backoff = Backoff::default();
        let mut connection = self.floor.connection.lock().await;
        let mut tries: u32 = 0;
        while !self.try_once(&mut connection, &owner).await? {
            if tries == 0 {
                let lifetime = [ENTRY_LIFETIME_US, ENTRY_LIFETIME_US];
                self.entry(&mut connection, &self.register, &waiter, &lifetime)
                    .await?;
            }
            tokio::time::sleep(backoff.delay(tries)).await;
            tries += 1;
        }
        if tries > 0 {
            self.entry(&mut connection, &self.leave, &waiter, &[])
                .await?;
        }
        Ok(Box::new(self.floor.held(owner)))
    }
}

/// Rolled back by contention: "deadlock found" (1213) or "lock wait timeout" (1205).
fn contended(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|error| error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .is_some_and(|error| matches!(error.number(), 1213 | 1205))
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
