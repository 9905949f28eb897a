//! The floor of distlock's own PostgreSQL statements: lock-sql's `take_row.sql`, `acquire_free.sql`,
//! `acquire_first.sql`, `acquire.sql`, `release_alone.sql` and `release.sql`, prepared, sent
//! by the simplest client (one connection for statements, one listening) with the arguments a
//! distlock acquisition sends. It does the same server work as distlock's pairs (the upsert,
//! the line and its mark, the release's grant and notification) and nothing else on the
//! client: no pool, no engine, no guard, no lease scheduler.
//!
//! It picks its statements as lock-sql's acquisitions that will wait do. Its first try sends
//! `acquire_free.sql` unless the client last found the lock row marked for waiters
//! (`take_row.sql`, the bare `UPDATE`, once a statement of the client found the row exist; a
//! refusal there forgets the row); a first try refused, or sent while marked, is followed by
//! (or is) `acquire_first.sql`, which places its waiter entry with its
//! grant terms and marks the row (later tries refresh the entry every 5 s); a release that
//! finds it first in line grants it the lock and notifies its client's channel alone, and the
//! grant needs no statement of its own; a release that names the lock alone or the entry
//! without a grant, a statement that found the lock freed behind its snapshot, or a second
//! without a word, makes it try again with `acquire.sql`. Its release sends
//! `release_alone.sql` unless the client last found the row marked, and `release.sql` when
//! that one is refused.

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

/// How far ahead a placed entry marks the lock row, as lock-sql's, in microseconds.
const MARK_AHEAD_US: i64 = 20_000_000;

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
    /// `take_row.sql`: the first try on the row once the client saw it exist.
    take: SqlStr,
    /// Whether a statement of this client found the lock row exist.
    known: Arc<AtomicBool>,
    /// `acquire_first.sql`: a first try that reads the line and places the entry.
    in_line: SqlStr,
    /// `acquire.sql`: the tries after the first, which keep the entry.
    again: SqlStr,
    /// `release.sql`: the release that grants the first waiter.
    hand_over: SqlStr,
    /// Whether this client last found the lock row marked for waiters.
    marked: Arc<AtomicBool>,
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
        include_str!("../../../lock-sql/sql/postgres/acquire_free.sql"),
        include_str!("../../../lock-sql/sql/postgres/release_alone.sql"),
    )
    .await?;
    Ok(PgStatementFloor {
        floor,
        take: statement(include_str!("../../../lock-sql/sql/postgres/take_row.sql")),
        known: Arc::new(AtomicBool::new(false)),
        in_line: statement(include_str!(
            "../../../lock-sql/sql/postgres/acquire_first.sql"
        )),
        again: statement(include_str!("../../../lock-sql/sql/postgres/acquire.sql")),
        hand_over: statement(include_str!("../../../lock-sql/sql/postgres/release.sql")),
        marked: Arc::new(AtomicBool::new(false)),
        line: Arc::new(PgLine::listen(url, TABLE, name).await?),
    })
}

impl PgStatementFloor {
    /// `take_row.sql` once the row is known to exist, else `acquire_free.sql`, for `owner`:
    /// granted, refused with the lock held, or refused with the lock free but marked for
    /// waiters (then the client remembers the mark; `take_row.sql` cannot tell).
    async fn try_free(&self, connection: &mut PgConnection, owner: &[u8]) -> BenchResult<Tried> {
        if self.known.load(Ordering::Relaxed) {
            return self.take(connection, owner).await;
        }
        let row = sqlx::query(self.floor.acquire.clone())
            .bind(&self.floor.name)
            .bind(owner)
            .bind(LEASE_US)
            .bind("floor")
            .fetch_one(connection)
            .await;
        let Some(Found { fence, left, .. }) = outcome(row)? else {
            return Ok(Tried::Refused);
        };
        // The row exists from here on: the bench never deletes it.
        self.known.store(true, Ordering::Relaxed);
        Ok(match (fence, left) {
            (Some(_), _) => Tried::Granted,
            (None, Some(_)) => Tried::Refused,
            (None, None) => {
                self.marked.store(true, Ordering::Relaxed);
                Tried::Refused
            }
        })
    }

    /// `take_row.sql` for `owner`: granted, or refused (held, marked or gone: the client
    /// forgets the row, as lock-sql does).
    async fn take(&self, connection: &mut PgConnection, owner: &[u8]) -> BenchResult<Tried> {
        let row = sqlx::query(self.take.clone())
            .bind(&self.floor.name)
            .bind(owner)
            .bind(LEASE_US)
            .bind("floor")
            .fetch_optional(connection)
            .await;
        match row {
            Ok(Some(_)) => Ok(Tried::Granted),
            Ok(None) => {
                self.known.store(false, Ordering::Relaxed);
                Ok(Tried::Refused)
            }
            Err(error) if contended(&error) => Ok(Tried::Refused),
            Err(error) => Err(error.into()),
        }
    }

    /// One try with the line-reading statement `sql` for `owner`, whose waiter entry `entry`
    /// is placed or refreshed when refused, if `place`: granted, refused, or refused after
    /// the lock was freed behind the statement's snapshot (then it tries again at once).
    async fn try_in_line(
        &self,
        connection: &mut PgConnection,
        sql: SqlStr,
        (owner, entry, place): (&[u8], &[u8], bool),
    ) -> BenchResult<Tried> {
        let row = sqlx::query(sql)
            .bind(&self.floor.name)
            .bind(owner)
            .bind(LEASE_US)
            .bind("floor")
            .bind(entry)
            .bind(place)
            .bind(ENTRY_LIFETIME_US)
            .bind(MARK_AHEAD_US)
            .fetch_one(connection)
            .await;
        let Some(Found { row, fence, left }) = outcome(row)? else {
            return Ok(Tried::Refused);
        };
        self.marked.store(row.try_get("marked")?, Ordering::Relaxed);
        Ok(match (fence, left) {
            (Some(_), _) => Tried::Granted,
            (None, Some(0)) => Tried::Freed,
            (None, _) => Tried::Refused,
        })
    }

    /// Sends the release statement `sql` for `owner` (with the channel, for `release.sql`):
    /// its row, `None` when it released nothing.
    async fn send_release(
        &self,
        sql: SqlStr,
        owner: &[u8],
        channel: Option<&str>,
    ) -> BenchResult<Option<PgRow>> {
        let mut connection = self.floor.connection.lock().await;
        let query = sqlx::query(sql).bind(&self.floor.name).bind(owner);
        let query = match channel {
            Some(channel) => query.bind(channel),
            None => query,
        };
        Ok(query.fetch_optional(&mut *connection).await?)
    }
}

/// An acquire statement's row with its `fence` and `remaining_us`.
struct Found {
    row: PgRow,
    fence: Option<i64>,
    left: Option<i64>,
}

/// What an acquire statement returned; `None` when the server refused it for contention (a
/// refused try).
fn outcome(row: Result<PgRow, sqlx::Error>) -> BenchResult<Option<Found>> {
    let row = match row {
        Ok(row) => row,
        Err(error) if contended(&error) => return Ok(None),
        Err(error) => return Err(error.into()),
    };
    let fence: Option<i64> = row.try_get("fence")?;
    let left: Option<i64> = row.try_get("remaining_us")?;
    Ok(Some(Found { row, fence, left }))
}

/// What one try found.
enum Tried {
    Granted,
    Refused,
    /// Refused, but the lock was freed behind the statement's snapshot.
    Freed,
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
        if !self.marked.load(Ordering::Relaxed)
            && matches!(
                self.try_free(&mut connection, &owner).await?,
                Tried::Granted
            )
        {
            drop(connection);
            return Ok(Box::new(PgStatementHeld {
                floor: self.clone(),
                owner,
            }));
        }
        let (mut sql, mut placed) = (self.in_line.clone(), None);
        loop {
            let sent = Instant::now();
            let place = placed.is_none_or(|at: Instant| sent >= at + ENTRY_REFRESH);
            let tried = self
                .try_in_line(&mut connection, sql, (&owner, &entry, place))
                .await?;
            if place {
                placed = Some(sent);
            }
            sql = self.again.clone();
            match tried {
                Tried::Granted => break,
                Tried::Freed => continue,
                Tried::Refused => {}
            }
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
        if !floor.marked.load(Ordering::Relaxed) {
            let alone = floor.floor.release.clone();
            if floor
                .send_release(alone, &self.owner, None)
                .await?
                .is_some()
            {
                return Ok(());
            }
        }
        let Some(row) = floor
            .send_release(floor.hand_over.clone(), &self.owner, Some(TABLE))
            .await?
        else {
            return Err("the statement floor's release found no hold".into());
        };
        let waited: Option<bool> = row.try_get("waited")?;
        let marked: bool = row.try_get("marked")?;
        floor
            .marked
            .store(waited == Some(true) || marked, Ordering::Relaxed);
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
