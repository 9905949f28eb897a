//! One try on PostgreSQL: which acquire statement it sends, and what that statement found.

use std::time::Duration;

use sqlx::Row;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgRow;

use super::first_try::Taken;
use super::{MICROSECOND, PgDb, contended};
use crate::db::{Attempt, Owner, Waiting, fence, remaining, settle, whole};
use crate::error::{SqlError, timed};
use crate::waiting::{ENTRY_LIFETIME, MARK_AHEAD};

impl PgDb {
    /// One round trip when the lock is free and nobody waits: the first try of an acquisition,
    /// on a name this service has not found marked for waiters, sends an `UPDATE` of the lock
    /// row when it saw the row exist (`take_row.sql` when the acquisition will wait, else
    /// `acquire_row.sql`), else `acquire_free.sql` (see [`Self::take_row`] and
    /// [`Self::first_try_found`]); none reads the waiters table or the line. When that finds
    /// the lock held and the acquisition will wait, or the row marked for waiters,
    /// `acquire_first.sql` follows, which reads the line and places the entry; later tries send
    /// `acquire.sql`. A name found marked is remembered until a statement finds its mark
    /// passed, and its first tries go straight to `acquire_first.sql`.
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
            if waiting.place && self.known_rows.contains(name) {
                // An acquisition that will wait learns nothing from a refusal that the
                // statement placing its entry does not tell it anyway.
                match self.take_row(conn, name, grant).await? {
                    Taken::Granted(fence) => return Ok(Attempt::Granted(fence)),
                    Taken::Contended => return Ok(Attempt::Contended),
                    Taken::Refused => {}
                }
            } else {
                if let Some(attempt) = self
                    .first_try_found(conn, name, grant, waiting.place)
                    .await?
                {
                    return Ok(attempt);
                }
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

/// What an acquire statement's row says.
pub(super) enum Found {
    Granted(u64),
    /// Not granted; the holder's remaining lease, or how long the first waiter ahead keeps its
    /// entry, when the statement could tell.
    Held(Option<Duration>),
}

pub(super) fn found(row: &PgRow) -> Result<Found, SqlError> {
    let granted: Option<i64> = row.try_get("fence")?;
    let left: Option<i64> = row.try_get("remaining_us")?;
    Ok(match granted {
        Some(value) => Found::Granted(fence(value)?),
        None => Found::Held(remaining(left, MICROSECOND)),
    })
}

/// The statement's row; `None` when the server rolled it back for contention (nothing changed).
pub(super) fn outcome(
    conn: &mut PoolConnection<sqlx::Postgres>,
    result: Result<PgRow, SqlError>,
) -> Result<Option<PgRow>, SqlError> {
    match settle(conn, result) {
        Err(SqlError::Sqlx(error)) if contended(&error) => Ok(None),
        other => other.map(Some),
    }
}
