//! The PostgreSQL floor: the least a row lock's server can do per pair, one prepared statement
//! each way (`INSERT` the row, `DELETE` it) on one connection, with no `ON CONFLICT`, no polling,
//! no transaction and no lease upkeep. Uncontended only: a second client's insert fails instead
//! of waiting.

use std::time::Duration;

use async_trait::async_trait;
use lock_sql::sqlx;

use super::pg::{PgRowLock, RowHeld};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One connection inserting and deleting the row `name` of the row lock's table
/// ([`pg::ensure_table`](super::pg::ensure_table)); the delete is the row lock's release.
#[derive(Debug, Clone)]
pub struct PgFloor(PgRowLock);

impl PgFloor {
    /// Connects for the row `name`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect(url: &str, name: &str) -> BenchResult<Self> {
        Ok(Self(PgRowLock::connect(url, name, Duration::ZERO).await?))
    }
}

#[async_trait]
impl Contender for PgFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = super::token();
        let mut connection = self.0.connection.lock().await;
        sqlx::query(
            "INSERT INTO peer_row_locks (name, owner, expires_at) \
             VALUES ($1, $2, now() + interval '30 seconds')",
        )
        .bind(&self.0.name)
        .bind(&owner)
        .execute(&mut *connection)
        .await?;
        Ok(Box::new(RowHeld {
            lock: self.0.clone(),
            owner,
        }))
    }
}
