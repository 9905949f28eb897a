//! Hand-written PostgreSQL locks: a unique row (`INSERT ... ON CONFLICT DO NOTHING`, retried at a
//! fixed interval; `DELETE` to release) and a session advisory lock (`pg_advisory_lock`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_sql::sqlx::{self, Connection, PgConnection};
use tokio::sync::Mutex;

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// The table of the row lock (written out in each statement: sqlx takes only literal SQL).
pub const TABLE: &str = "peer_row_locks";

/// Creates the row lock's table if it is missing.
///
/// # Cancel safety
///
/// Cancel safe: `CREATE TABLE IF NOT EXISTS` either ran or did not; running it again is harmless.
///
/// # Errors
///
/// The connection's or statement's error.
pub async fn ensure_table(url: &str) -> BenchResult<()> {
    let mut connection = PgConnection::connect(url).await?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS peer_row_locks (name text PRIMARY KEY, owner text NOT NULL, \
         expires_at timestamptz NOT NULL)",
    )
    .execute(&mut connection)
    .await?;
    connection.close().await?;
    Ok(())
}

/// One client (its own connection) of the row lock `name`, polling every `interval`.
#[derive(Debug, Clone)]
pub struct PgRowLock {
    pub(super) connection: Arc<Mutex<PgConnection>>,
    pub(super) name: String,
    interval: Duration,
}

impl PgRowLock {
    /// Connects for the row lock `name`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect(url: &str, name: &str, interval: Duration) -> BenchResult<Self> {
        Ok(Self {
            connection: Arc::new(Mutex::new(PgConnection::connect(url).await?)),
            name: name.to_owned(),
            interval,
        })
    }
}

/// A held row, released by deleting it (shared with the [floor](super::pg_floor)).
pub(super) struct RowHeld {
    pub(super) lock: PgRowLock,
    pub(super) owner: String,
}

#[async_trait]
impl Contender for PgRowLock {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = super::token();
        loop {
            let inserted = {
                let mut connection = self.connection.lock().await;
                sqlx::query(
                    "INSERT INTO peer_row_locks (name, owner, expires_at) \
                     VALUES ($1, $2, now() + interval '30 seconds') ON CONFLICT DO NOTHING",
                )
                .bind(&self.name)
                .bind(&owner)
                .execute(&mut *connection)
                .await?
                .rows_affected()
            };
            if inserted == 1 {
                return Ok(Box::new(RowHeld {
                    lock: self.clone(),
                    owner,
                }));
            }
            tokio::time::sleep(self.interval).await;
        }
    }
}

#[async_trait]
impl Held for RowHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.lock.connection.lock().await;
        sqlx::query("DELETE FROM peer_row_locks WHERE name = $1 AND owner = $2")
            .bind(&self.lock.name)
            .bind(&self.owner)
            .execute(&mut *connection)
            .await?;
        Ok(())
    }
}

/// One client (its own session) of the advisory lock `key`: `pg_advisory_lock` waits in the
/// server, `pg_advisory_unlock` releases.
#[derive(Debug, Clone)]
pub struct PgAdvisoryLock {
    connection: Arc<Mutex<PgConnection>>,
    key: i64,
}

impl PgAdvisoryLock {
    /// Connects for advisory lock `key`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect(url: &str, key: i64) -> BenchResult<Self> {
        Ok(Self {
            connection: Arc::new(Mutex::new(PgConnection::connect(url).await?)),
            key,
        })
    }
}

struct AdvisoryHeld(PgAdvisoryLock);

#[async_trait]
impl Contender for PgAdvisoryLock {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let mut connection = self.connection.lock().await;
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(self.key)
            .execute(&mut *connection)
            .await?;
        Ok(Box::new(AdvisoryHeld(self.clone())))
    }
}

#[async_trait]
impl Held for AdvisoryHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.0.connection.lock().await;
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(self.0.key)
            .execute(&mut *connection)
            .await?;
        Ok(())
    }
}
