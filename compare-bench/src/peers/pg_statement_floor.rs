//! The floor of distlock's own PostgreSQL statements: lock-sql's `acquire_first.sql`,
//! `acquire.sql`, `release_alone.sql` and `release.sql`, prepared, sent by the simplest client
//! (one connection for statements, one listening) with the arguments a distlock acquisition
//! sends. It does the same server work as distlock's pairs (the upsert, the probes of the
//! waiters table, the release's grant and notification) and nothing else on the client: no
//! pool, no engine, no guard, no lease scheduler.
//!
//! Under contention it waits in line as a distlock acquisition does, with the same statements:
//! a refused first try places its waiter entry with its grant terms in the same statement
//! (later tries refresh it every 5 s); a
//! release that finds it first in line grants it the lock and notifies its client's channel
//! alone, and the grant needs no statement of its own; a release that names the lock alone (the
//! entry was placed after its snapshot) or the entry without a grant, or a second without a
//! word, makes it try again with `acquire.sql`. Its release sends `release_alone.sql` unless
//! its last release found a waiter, and `release.sql` when that one finds one now, as
//! lock-sql's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lock_sql::sqlx::postgres::PgRow;
use lock_sql::sqlx::{self, PgConnection, Row, SqlStr};

use super::pg_line::{Heard, PgLine};
use super::statement_floor::{LEASE_US, StatementFloor, TABLE, statement};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// How long a waiter entry lasts unless refreshed, as lock-sql's, in microseconds.
const ENTRY_LIFETIME_US: i64 = 15_000_000;

/// How often a waiter refreshes its entry, as lock-sql's: the tries between refreshes leave it
/// as it is.
const ENTRY_REFRESH: Duration = Duration::from_secs(5);

/// How long a waiter waits without a word before it tries again.
const RECHECK: Duration = Duration::from_secs(1);

/// SQLSTATEs of a statement the server refused for contention, which lock-sql treats as a
/// refused try.
const CONTENDED: [&str; 3] = ["40001", "40P01", "55P03"];

/// One client (its own connections) sending distlock's PostgreSQL statements for one name.
#[derive(Debug, Clone)]
pub struct PgStatementFloor {
    floor: StatementFloor<PgConnection>,
    /// `acquire.sql`: the tries after the first, which keep the entry.
    again: SqlStr,
    /// `release.sql`: the release that grants the first waiter.
    hand_over: SqlStr,
    /// Whether this client's last release found a waiter in line.
    waited: Arc<AtomicBool>,
    line: Arc<PgLine>,
}

/// A hold of the floor: its client and the owner token its grant carries.
#[derive(Debug)]
pub struct PgStatementHeld {
    floor: PgStatementFloor,
    owner: [u8; 16],
}

/// Makes the tables and connects for the lock `name` on the PostgreSQL server of `url`.
///
/// # Cancel safety
///
/// As [`StatementFloor::connect`].
///
/// # Errors
///
/// As [`StatementFloor::connect`] and [`PgLine::listen`].
pub async fn connect(url: &str, name: &str) -> BenchResult<PgStatementFloor> {
    let floor = StatementFloor::connect(
        url,
        name,
        include_str!("../../../lock-sql/sql/postgres/acquire_first.sql"),
        include_str!("../../../lock-sql/sql/postgres/release_alone.sql"),
    )
    .await?;
    Ok(PgStatementFloor {
        floor,
        again: statement(include_str!("../../../lock-sql/sql/postgres/acquire.sql")),
        hand_over: statement(include_str!("../../../lock-sql/sql/postgres/release.sql")),
        waited: Arc::new(AtomicBool::new(false)),
        line: Arc::new(PgLine::listen(url, TABLE, name).await?),
    })
}

impl PgStatementFloor {
    /// One try with the acquire statement `sql` for `owner`, whose waiter entry `entry` is
    /// placed or refreshed when refused, if `place`: whether it was granted.
    async fn try_once(
        &self,
        connection: &mut PgConnection,
        sql: SqlStr,
        (owner, entry, place): (&[u8], &[u8], bool),
    ) -> BenchResult<bool> {
        let fence: Result<Option<i64>, sqlx::Error> = sqlx::query_scalar(sql)
            .bind(&self.floor.name)
            .bind(owner)
            .bind(LEASE_US)
            .bind("floor")
            .bind(entry)
            .bind(place)
            .bind(ENTRY_LIFETIME_US)
            .fetch_one(connection)
            .await;
        match fence {
            Ok(fence) => Ok(fence.is_some()),
            Err(error) if contended(&error) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// Sends the release statement `sql` for `owner`: its row, `None` when it released
    /// nothing.
    async fn send_release(&self, sql: SqlStr, owner: &[u8]) -> BenchResult<Option<PgRow>> {
        let mut connection = self.floor.connection.lock().await;
        let row = sqlx::query(sql)
            .bind(&self.floor.name)
            .bind(owner)
            .bind(TABLE)
            .fetch_optional(&mut *connection)
            .await?;
        Ok(row)
    }
}

#[async_trait]
impl Contender for PgStatementFloor {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let owner = rand::random::<u128>().to_be_bytes();
        let entry = self.line.entry_id();
        let mut heard = self.line.heard().lock().await;
        // Whatever earlier acquisitions of this client left unread concerns none of this one.
        while heard.try_recv().is_ok() {}
        let mut connection = self.floor.connection.lock().await;
        let (mut sql, mut placed) = (self.floor.acquire.clone(), None);
        loop {
            let sent = Instant::now();
            let place = placed.is_none_or(|at: Instant| sent >= at + ENTRY_REFRESH);
            if self
                .try_once(&mut connection, sql, (&owner, &entry, place))
                .await?
            {
                break;
            }
            if place {
                placed = Some(sent);
            }
            sql = self.again.clone();
            loop {
                match tokio::time::timeout(RECHECK, heard.recv()).await {
                    Err(_silent) => break,
                    Ok(None) => return Err("the floor's listener stopped".into()),
                    Ok(Some(Heard::Granted(id))) if id == entry => {
                        drop(connection);
                        return Ok(Box::new(PgStatementHeld {
                            floor: self.clone(),
                            owner,
                        }));
                    }
                    Ok(Some(Heard::Released)) => break,
                    Ok(Some(Heard::Next(id))) if id == entry => break,
                    Ok(Some(_)) => {}
                }
            }
        }
        drop(connection);
        Ok(Box::new(PgStatementHeld {
            floor: self.clone(),
            owner,
        }))
    }
}

#[async_trait]
impl Held for PgStatementHeld {
    async fn release(self: Box<Self>) -> BenchResult<()> {
        let floor = &self.floor;
        if !floor.waited.load(Ordering::Relaxed) {
            let alone = floor.floor.release.clone();
            if floor.send_release(alone, &self.owner).await?.is_some() {
                return Ok(());
            }
        }
        let Some(row) = floor
            .send_release(floor.hand_over.clone(), &self.owner)
            .await?
        else {
            return Err("the statement floor's release found no hold".into());
        };
        let waited: Option<bool> = row.try_get("waited")?;
        floor.waited.store(waited == Some(true), Ordering::Relaxed);
        Ok(())
    }
}

/// Refused by the server for contention (see [`CONTENDED`]).
fn contended(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|error| error.code())
        .is_some_and(|code| CONTENDED.contains(&code.as_ref()))
}
