//! MySQL/MariaDB locks written by hand: the server's named locks (`GET_LOCK`, which waits in the
//! server, and `RELEASE_LOCK`) and a unique row (`INSERT IGNORE`, retried at a fixed interval;
//! `DELETE` to release).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_sql::sqlx::{self, Connection, MySqlConnection};
use tokio::sync::Mutex;

use crate::BenchResult;
use crate::contend::{Contender, Held};

/// `GET_LOCK`'s wait, in seconds: a year, as good as forever for a benchmark (MySQL and MariaDB
/// disagree on what a negative timeout means).
const GET_LOCK_WAIT_S: i64 = 31_536_000;

async fn connect(url: &str) -> BenchResult<Arc<Mutex<MySqlConnection>>> {
    Ok(Arc::new(Mutex::new(MySqlConnection::connect(url).await?)))
}

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
    let mut connection = MySqlConnection::connect(url).await?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS peer_row_locks (name varchar(191) PRIMARY KEY, \
         owner char(32) NOT NULL, expires_at datetime(6) NOT NULL)",
    )
    .execute(&mut connection)
    .await?;
    connection.close().await?;
    Ok(())
}

/// One client (its own session) of the named lock `key`.
#[derive(Debug, Clone)]
pub struct GetLock {
    connection: Arc<Mutex<MySqlConnection>>,
    key: String,
}

impl GetLock {
    /// Connects for the named lock `key` (at most 64 characters: MySQL's limit).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The connection's error.
    pub async fn connect(url: &str, key: &str) -> BenchResult<Self> {
        Ok(Self {
            connection: connect(url).await?,
            key: key.to_owned(),
        })
    }
}

struct NamedHeld(GetLock);

#[async_trait]
impl Contender for GetLock {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let mut connection = self.connection.lock().await;
        let (granted,): (Option<i64>,) = sqlx::query_as("SELECT GET_LOCK(?, ?)")
            .bind(&self.key)
            .bind(GET_LOCK_WAIT_S)
            .fetch_one(&mut *connection)
            .await?;
        if granted != Some(1) {
            return Err(format!("GET_LOCK({}) answered {granted:?}", self.key).into());
        }
        Ok(Box::new(NamedHeld(self.clone())))
    }
}

#[async_trait]
impl Held for NamedHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let mut connection = self.0.connection.lock().await;
        sqlx::query("DO RELEASE_LOCK(?)")
            .bind(&self.0.key)
            .execute(&mut *connection)
            .await?;
        Ok(())
    }
}

/// One client (its own connection) of the row lock `name`, polling every `interval`.
#[derive(Debug, Clone)]
pub struct MySqlRowLock {
    connection: Arc<Mutex<MySqlConnection>>,
    name: String,
    interval: Duration,
}

impl MySqlRowLock {
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
            connection: connect(url).await?,
            name: name.to_owned(),
            interval,
        })
    }
}

struct RowHeld {
    lock: MySqlRowLock,
    owner: String,
}

#[async_trait]
impl Contender for MySqlRowLock {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = super::token();
        loop {
            let inserted = sqlx::query(
                "INSERT IGNORE INTO peer_row_locks (name, owner, expires_at) \
                 VALUES (?, ?, NOW(6) + INTERVAL 30 SECOND)",
            )
            .bind(&self.name)
            .bind(&owner)
            .execute(&mut *self.connection.lock().await)
            .await;
            // InnoDB may pick the insert as a deadlock victim against a concurrent delete of
            // the same key: that is "not acquired", and the loop polls again.
            let inserted = match inserted {
                Ok(done) => done.rows_affected(),
                Err(error) if is_deadlock(&error) => 0,
                Err(error) => return Err(error.into()),
            };
            if inserted == 1 {
                let lock = self.clone();
                return Ok(Box::new(RowHeld { lock, owner }));
            }
            tokio::time::sleep(self.interval).await;
        }
    }
}

#[async_trait]
impl Held for RowHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        loop {
            let deleted = sqlx::query("DELETE FROM peer_row_locks WHERE name = ? AND owner = ?")
                .bind(&self.lock.name)
                .bind(&self.owner)
                .execute(&mut *self.lock.connection.lock().await)
                .await;
            match deleted {
                Ok(_) => return Ok(()),
                // A deadlock victim's statement was rolled back: the row is still ours.
                Err(error) if is_deadlock(&error) => continue,
                Err(error) => return Err(error.into()),
            }
        }
    }
}

/// InnoDB rolled the statement back as a deadlock victim (SQLSTATE 40001, error 1213).
fn is_deadlock(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.code().as_deref() == Some("40001"))
}
