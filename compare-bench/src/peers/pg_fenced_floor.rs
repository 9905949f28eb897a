//! The least fenced PostgreSQL lock: the [`PgFloor`](super::pg_floor::PgFloor)'s one statement
//! each way, with the grant also handing out a fencing token. The token is the next value of a
//! sequence, taken in the `INSERT` that adds the holder and returned by it (`RETURNING`), so a
//! grant is still one statement: the fewest server steps that hand out a fence. A sequence is
//! not rolled back, so tokens rise across every grant of every name. Uncontended only: a second
//! client's insert fails instead of waiting.

use std::sync::Arc;

use async_trait::async_trait;
use lock_sql::sqlx::{self, Connection, PgConnection};
use tokio::sync::Mutex;

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// The floor's table and sequence, created by the first client.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS peer_fenced_holds (name text PRIMARY KEY, \
     owner text NOT NULL, fence bigint NOT NULL, expires_at timestamptz NOT NULL); \
     CREATE SEQUENCE IF NOT EXISTS peer_fences";

/// Binds: name, owner. Adds the holder with the next fence.
const GRANT: &str = "INSERT INTO peer_fenced_holds (name, owner, fence, expires_at) \
     VALUES ($1, $2, nextval('peer_fences'), now() + interval '30 seconds') RETURNING fence";

/// Binds: name, owner. Removes the holder.
const RELEASE: &str = "DELETE FROM peer_fenced_holds WHERE name = $1 AND owner = $2";

/// One connection adding and removing the holder of `name`.
#[derive(Debug, Clone)]
pub struct PgFencedFloor {
    connection: Arc<Mutex<PgConnection>>,
    name: String,
}

impl PgFencedFloor {
    /// Connects for the lock `name`, creating the table and sequence if they are missing.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's or a statement's error.
    pub async fn connect(url: &str, name: &str) -> BenchResult<Self> {
        let mut connection = PgConnection::connect(url).await?;
        sqlx::raw_sql(SCHEMA).execute(&mut connection).await?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
            name: name.to_owned(),
        })
    }

    /// Takes the lock as `owner`: its fence.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped mid-statement, the holder may or may not have been added.
    ///
    /// # Errors
    ///
    /// The statement's error: the lock is held, or the connection failed.
    pub async fn grant(&self, owner: &str) -> BenchResult<i64> {
        let mut connection = self.connection.lock().await;
        let (fence,): (i64,) = sqlx::query_as(GRANT)
            .bind(&self.name)
            .bind(owner)
            .fetch_one(&mut *connection)
            .await?;
        Ok(fence)
    }
}

#[async_trait]
impl Contender for PgFencedFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = super::token();
        self.grant(&owner).await?;
        Ok(Box::new(FencedHeld {
            lock: self.clone(),
            owner,
        }))
    }
}

struct FencedHeld {
    lock: PgFencedFloor,
    owner: String,
}

#[async_trait]
impl Held for FencedHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.lock.connection.lock().await;
        let removed = sqlx::query(RELEASE)
            .bind(&self.lock.name)
            .bind(&self.owner)
            .execute(&mut *connection)
            .await?;
        match removed.rows_affected() {
            1 => Ok(()),
            rows => Err(format!("a release removed {rows} holders").into()),
        }
    }
}
