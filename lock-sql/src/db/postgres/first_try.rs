//! The first try of an acquisition on a name not marked for waiters: one statement that reads
//! no line, picked by whether the service saw the lock row exist and whether the acquisition
//! will wait.

use std::sync::atomic::Ordering;

use sqlx::Row;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgRow;

use super::acquire::{Found, found, outcome};
use super::{PgDb, ROW, TAKE, UPSERT, contended};
use crate::db::{Attempt, Owner, fence, settle};
use crate::error::{SqlError, timed};

/// What `take_row.sql` did.
pub(super) enum Taken {
    /// The lock is ours, with this fencing token.
    Granted(u64),
    /// Held, marked for waiters, or the row is gone: the statement does not say which.
    Refused,
    /// The server rolled the statement back for contention (nothing changed).
    Contended,
}

impl PgDb {
    /// `take_row.sql`, the bare `UPDATE` of a lock row this service saw exist, for an
    /// acquisition that will wait. A refusal forgets the row: the statement cannot tell a
    /// missing row from a held one, so the next first try sends the upsert, which inserts a
    /// missing row and learns it again.
    pub(super) async fn take_row(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        name: &str,
        (owner, lease_us, label): (Owner, i64, &str),
    ) -> Result<Taken, SqlError> {
        self.first_tries[TAKE].fetch_add(1, Ordering::Relaxed);
        let query = sqlx::query(self.sql.take_row.clone())
            .bind(name)
            .bind(owner.as_bytes())
            .bind(lease_us)
            .bind(label);
        let result = timed(self.timeout, query.fetch_optional(&mut **conn)).await;
        match settle(conn, result) {
            Ok(Some(row)) => Ok(Taken::Granted(fence(row.try_get("fence")?)?)),
            Ok(None) => {
                self.known_rows.forget(name);
                Ok(Taken::Refused)
            }
            Err(SqlError::Sqlx(error)) if contended(&error) => Ok(Taken::Contended),
            Err(error) => Err(error),
        }
    }

    /// The first try that reports what it found: `acquire_row.sql` on a lock row this service
    /// saw exist, `acquire_free.sql` on any other (see [`Self::first_try`]). The attempt's end
    /// when the try decides it: granted, rolled back for contention, or held for a try that
    /// will not wait; `None` when the acquisition goes on to the line (held, or free but
    /// marked for waiters, which the service then remembers).
    pub(super) async fn first_try_found(
        &self,
        conn: &mut PoolConnection<sqlx::Postgres>,
        name: &str,
        grant: (Owner, i64, &str),
        place: bool,
    ) -> Result<Option<Attempt>, SqlError> {
        let Some(row) = self.first_try(conn, name, grant).await? else {
            return Ok(Some(Attempt::Contended));
        };
        Ok(match found(&row)? {
            Found::Granted(fence) => Some(Attempt::Granted(fence)),
            // Held by another: a single try ends here.
            Found::Held(Some(left)) if !place => Some(Attempt::Held(Some(left))),
            Found::Held(Some(_)) => None,
            // Free, but a waiter entry may be live: the line decides.
            Found::Held(None) => {
                self.marked.insert(name);
                None
            }
        })
    }

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
