//! The floor of distlock's own PostgreSQL statements: lock-sql's `acquire_first.sql` and
//! `release_alone.sql` (the release distlock sends when nobody waited at its last release of
//! the name), prepared, sent by the simplest client (one connection, one statement each way)
//! with the arguments an uncontended distlock acquisition sends. It does the same server work
//! as distlock's pair (the upsert, the probes of the waiters table, the release's notification)
//! and nothing else on the client: no pool, no engine, no guard, no lease scheduler.
//! Uncontended only: it never waits.

use async_trait::async_trait;
use lock_sql::sqlx::{self, PgConnection};

use super::statement_floor::{LEASE_US, StatementFloor, StatementHeld, TABLE};

/// How long a waiter entry lasts unless refreshed, as lock-sql's, in microseconds.
const ENTRY_LIFETIME_US: i64 = 15_000_000;
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One client (its own connection) sending distlock's PostgreSQL statements for one name.
pub type PgStatementFloor = StatementFloor<PgConnection>;

/// Makes the tables and connects for the lock `name` on the PostgreSQL server of `url`.
///
/// # Cancel safety
///
/// As [`StatementFloor::connect`].
///
/// # Errors
///
/// As [`StatementFloor::connect`].
pub async fn connect(url: &str, name: &str) -> BenchResult<PgStatementFloor> {
    StatementFloor::connect(
        url,
        name,
        include_str!("../../../lock-sql/sql/postgres/acquire_first.sql"),
        include_str!("../../../lock-sql/sql/postgres/release_alone.sql"),
    )
    .await
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
            // A waiting acquisition's entry id, and whether to place it (it would: it waits),
            // and its lifetime.
            .bind(rand::random::<u128>().to_be_bytes().as_slice())
            .bind(true)
            .bind(ENTRY_LIFETIME_US)
            .fetch_one(&mut *connection)
            .await?;
        if fence.is_none() {
            return Err("the statement floor's lock was held: it runs uncontended only".into());
        }
        Ok(Box::new(self.held(owner)))
    }
}

#[async_trait]
impl Held for StatementHeld<PgConnection> {
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
