//! One try on PostgreSQL: which acquire statement it sends, and what that statement found.

use std::sync::atomic::Ordering;
use std::time::Duration;

use sqlx::Row;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgRow;

use super::{MICROSECOND, PgDb, ROW, UPSERT, contended};
use crate::db::{Attempt, Owner, Waiting, fence, remaining, settle, whole};
use crate::error::{SqlError, timed};
use crate::waiting::{ENTRY_LIFETIME, MARK_AHEAD};

impl PgDb {
    /// One round trip when the lock is free and nobody waits: the first try of an acquisition,
    /// on a name this service has not found marked for waiters, sends `acquire_row.sql` when
    /// it saw the name's lock row exist, else `acquire_free.sql` (see [`Self::first_try`]);
    /// neither reads the waiters table nor the line. When that finds the lock held and the
    /// acquisition will wait, or the row marked for waiters, `acquire_first.sql` follows, which
    /// reads the line and places the entry; later tries send `acquire.sql`. A name found marked
    /// is remembered until a statement finds its mark passed, and its first tries go straight
    /// to `acquire_first.sql`.
    pub(crate) async fn acquire(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        name: &str,
        owner: Owner,
        lease: Duration,
        label: &str,
        waiting: Waiting,
    ) -> Result<Attempt, SqlError> {
        let lease_us = whole(lease, MICROSECOND);
        if !waiting.placed && !self.marked.contains(name) {
            let grant = (owner, lease_us, label);
            let Some(row) = self.first_try(conn, name, grant).await? else {
                return Ok(Attempt::Contended);
            };
            let held = match found(&row)? {
                Found::Granted(fence) => return Ok(Attempt::Granted(fence)),
                Found::Held(left) => left,
            };
            match held {
                // Held by another: a single try ends here.
                Some(left) if !waiting.place => return Ok(Attempt::Held(Some(left))),
                Some(_) => {}
                // Free, but a waiter entry may be live: the line decides.
                None => self.marked.insert(name),
            }
        }
        let sql = match waiting.placed {
            true => &self.sql.acquire,
            false => &self.sql.acquire_first,
        };
        let query = sqlx::query(sql.clone())
            .bind(name)
            .bind(owner.as_bytes())
            .bind(lease_us)
            .bind(label)
            .bind(waiting.id.as_bytes())
            .bind(waiting.place)
            .bind(whole(ENTRY_LIFETIME, MICROSECOND))
            .bind(whole(MARK_AHEAD, MICROSECOND));
        let result = timed(self.timeout, query.fetch_one(&mut **conn)).await;
        let Some(row) = outcome(conn, result)? else {
            return Ok(Attempt::Contended);
        };
        match row.try_get::<bool, _>("marked")? {
            true => self.marked.insert(name),
            false => self.marked.forget(name),
        }
        Ok(match found(&row)? {
            Found::Granted(fence) => Attempt::Granted(fence),
            Found::Held(left) => Attempt::Held(left),
        })
    }
}

impl PgDb {
    /// The row of a first try that reads no line: `acquire_row.sql` on a lock row this
    /// service saw exist, and `acquire_free.sql` on any other, or after `acquire_row.sql`
    /// found the row gone; `None` when the server rolled the statement back for contention.
    async fn first_try(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        name: &str,
        grant: (Owner, i64, &str),
    ) -> Result<Option<PgRow>, SqlError> {
        if self.known_rows.contains(name) {
            match self.send_first_try(conn, ROW, name, grant).await? {
                Some(row) if !row.try_get::<bool, _>("present")? => self.known_rows.forget(name),
                row => return Ok(row),
            }
        }
        let row = self.send_first_try(conn, UPSERT, name, grant).await?;
        if row.is_some() {
            self.known_rows.insert(name);
        }
        Ok(row)
    }

    /// Sends the first-try statement of `kind`, [`ROW`] or [`UPSERT`]; its row, `None` when
    /// the server rolled it back for contention.
    async fn send_first_try(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        kind: usize,
        name: &str,
        (owner, lease_us, label): (Owner, i64, &str),
    ) -> Result<Option<PgRow>, SqlError> {
        self.first_tries[kind].fetch_add(1, Ordering::Relaxed);
        let sql = match kind {
            ROW => &self.sql.acquire_row,
            _ => &self.sql.acquire_free,
        };
        let query = sqlx::query(sql.clone())
            .bind(name)
            .bind(owner.as_bytes())
            .bind(lease_us)
            .bind(label);
        let result = timed(self.timeout, query.fetch_one(&mut **conn)).await;
        outcome(conn, result)
    }
}

/// What an acquire statement's row says.
enum Found {
    Granted(u64),
    /// Not granted; the holder's remaining lease, or how long the first waiter ahead keeps its
    /// entry, when the statement could tell.
    Held(Option<Duration>),
}

fn found(row: &PgRow) -> Result<Found, SqlError> {
    let granted: Option<i64> = row.try_get("fence")?;
    let left: Option<i64> = row.try_get("remaining_us")?;
    Ok(match granted {
        Some(value) => Found::Granted(fence(value)?),
        None => Found::Held(remaining(left, MICROSECOND)),
    })
}

/// The statement's row; `None` when the server rolled it back for contention (nothing changed).
fn outcome(
    conn: &mut PoolConnection<sqlx::Postgres>,
    result: Result<PgRow, SqlError>,
) -> Result<Option<PgRow>, SqlError> {
    match settle(conn, result) {
        Err(SqlError::Sqlx(error)) if contended(&error) => Ok(None),
        other => other.map(Some),
    }
}
