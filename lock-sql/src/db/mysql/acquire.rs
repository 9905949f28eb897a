//! One try on MySQL and MariaDB: which acquire statement it sends, and the outcome that
//! statement reports in its insert id.

use std::time::Duration;

use sqlx::pool::PoolConnection;

use super::{MICROSECOND, MyDb, contended};
use crate::db::{Attempt, Owner, Waiting, remaining, settle, whole};
use crate::error::{SqlError, timed};

impl MyDb {
    /// One round trip while the lock row says no waiter entry can be live: on a row this
    /// service has seen, the `UPDATE` `acquire_row.sql`; on any other, or one found missing,
    /// the upsert `acquire.sql`. Otherwise `acquire_in_line.sql` decides: it grants only when
    /// no live entry is ahead of `waiting`'s. A waiting acquisition whose entry is placed
    /// and whose turn came first reads whether a release granted it the lock under its owner
    /// token (`handed.sql`), and if not sends `acquire_row.sql` too. Placing and refreshing the
    /// entry is [`crate::db::Db::acquire`]'s.
    ///
    /// A try that finds the lock held remembers that a line forms at `name` (see
    /// [`MyDb::release`]).
    pub(crate) async fn acquire(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        owner: Owner,
        lease: Duration,
        label: &str,
        waiting: Waiting,
    ) -> Result<Attempt, SqlError> {
        if waiting.placed && waiting.turn {
            if let Some(fence) = self.handed(conn, name, owner).await? {
                return Ok(Attempt::Handed(fence));
            }
        }
        let grant = Grant {
            name: name.as_bytes(),
            token: owner.as_bytes(),
            lease_us: whole(lease, MICROSECOND),
            label: label.as_bytes(),
        };
        let taken = match self.take_row(conn, &grant, name).await? {
            Some(attempt) => Some(attempt),
            None if !waiting.placed => {
                let upsert = grant.bind(self.sql.acquire.clone(), None);
                let result = timed(self.timeout, upsert.execute(&mut **conn)).await;
                Some(self.seen(name, attempt(conn, result)?))
            }
            None => None,
        };
        if let Some(attempt) = taken.filter(|&attempt| attempt != FREE_BUT_MARKED) {
            return Ok(attempt);
        }
        let upsert = grant.bind(
            self.sql.acquire_in_line.clone(),
            Some(waiting.id.as_bytes()),
        );
        let result = timed(self.timeout, upsert.execute(&mut **conn)).await;
        Ok(self.seen(name, attempt(conn, result)?))
    }

    /// The fence of our live hold of `name`, which a release granted to this acquisition's
    /// entry (`release_grant.sql`, `grant_head.sql`), read without locking the row
    /// (`handed.sql`); `None` when the lock is not ours.
    async fn handed(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        owner: Owner,
    ) -> Result<Option<u64>, SqlError> {
        let read = sqlx::query_scalar::<_, i64>(self.sql.handed.clone())
            .bind(name.as_bytes())
            .bind(owner.as_bytes());
        let result = timed(self.timeout, read.fetch_optional(&mut **conn)).await;
        Ok(settle(conn, result)?.and_then(|fence| u64::try_from(fence).ok()))
    }

    /// `acquire_row.sql`'s outcome, when this service has seen `name`'s row; `None` when it
    /// has not, or the statement found the row missing.
    async fn take_row(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        grant: &Grant<'_>,
        name: &str,
    ) -> Result<Option<Attempt>, SqlError> {
        if !self.known_rows.contains(name) {
            return Ok(None);
        }
        let update = sqlx::query(self.sql.acquire_row.clone())
            .bind(grant.token)
            .bind(grant.lease_us)
            .bind(grant.label)
            .bind(grant.name)
            .bind(grant.token);
        let result = timed(self.timeout, update.execute(&mut **conn)).await;
        let done = match settle(conn, result) {
            Err(SqlError::Sqlx(error)) if contended(&error) => return Ok(Some(Attempt::Contended)),
            other => other?,
        };
        // A grant matched the row and set the fence; a refusal matched none and set 2^63 and
        // the lease left; a missing row matched none and set nothing.
        match (done.rows_affected(), done.last_insert_id()) {
            (0, 0) => {
                self.known_rows.forget(name);
                Ok(None)
            }
            (rows @ (0 | 1), id) if (rows == 1) == (id & REFUSED == 0) => {
                outcome(id).map(|attempt| Some(self.noted(name, attempt)))
            }
            (rows, id) => Err(SqlError::Sqlx(sqlx::Error::Protocol(format!(
                "acquire_row.sql matched {rows} rows and reported insert id {id}"
            )))),
        }
    }

    /// `attempt`, after remembering that `name`'s row exists when a statement reached it.
    fn seen(&self, name: &str, attempt: Attempt) -> Attempt {
        if attempt != Attempt::Contended {
            self.known_rows.insert(name);
        }
        self.noted(name, attempt)
    }

    /// `attempt`, after remembering that a line forms at `name` when it found the lock held.
    fn noted(&self, name: &str, attempt: Attempt) -> Attempt {
        if matches!(attempt, Attempt::Held(_)) {
            self.lined.insert(name);
        }
        attempt
    }
}

/// Set in the acquire statement's insert id when the try was refused; the bits below it hold
/// the holder's remaining lease in microseconds. A fence is a signed counter: always below it.
const REFUSED: u64 = 1 << 63;

/// The arguments of an acquire statement.
struct Grant<'a> {
    name: &'a [u8],
    token: &'a [u8],
    lease_us: i64,
    label: &'a [u8],
}

impl<'a> Grant<'a> {
    /// `sql` with its arguments bound: the row to insert, then for `acquire_in_line.sql` the
    /// acquisition's waiter entry (`line`) and the name, then the update's.
    fn bind(&self, sql: sqlx::SqlStr, line: Option<&'a [u8]>) -> MySqlQuery<'a> {
        let mut query = sqlx::query(sql)
            .bind(self.name)
            .bind(self.token)
            .bind(self.lease_us)
            .bind(self.label);
        if let Some(waiter) = line {
            query = query.bind(waiter).bind(self.name);
        }
        query
            .bind(self.token)
            .bind(self.token)
            .bind(self.token)
            .bind(self.lease_us)
            .bind(self.token)
            .bind(self.label)
            .bind(self.token)
    }
}

/// A MySQL statement with its arguments bound.
type MySqlQuery<'a> = sqlx::query::Query<'a, sqlx::MySql, sqlx::mysql::MySqlArguments>;

/// What `acquire.sql` reports when the lock is free but a waiter entry may be live (and
/// `acquire_in_line.sql` when the lock is free but others are ahead).
const FREE_BUT_MARKED: Attempt = Attempt::Held(None);

/// An acquire statement's outcome, from its insert id when it ran.
fn attempt(
    conn: &mut PoolConnection<sqlx::MySql>,
    result: Result<sqlx::mysql::MySqlQueryResult, SqlError>,
) -> Result<Attempt, SqlError> {
    match settle(conn, result) {
        Err(SqlError::Sqlx(error)) if contended(&error) => Ok(Attempt::Contended),
        Err(error) => Err(error),
        Ok(done) => outcome(done.last_insert_id()),
    }
}

/// The acquire statement's outcome from its insert id: the new fence, or the holder's lease.
fn outcome(insert_id: u64) -> Result<Attempt, SqlError> {
    match insert_id {
        0 => Err(SqlError::Sqlx(sqlx::Error::Protocol(
            "the acquire statement reported no outcome (insert id 0)".into(),
        ))),
        id if id & REFUSED == 0 => Ok(Attempt::Granted(id)),
        // Free, but others are ahead in line.
        REFUSED => Ok(Attempt::Held(None)),
        id => {
            let left = i64::try_from(id & !REFUSED).unwrap_or(i64::MAX);
            Ok(Attempt::Held(remaining(Some(left), MICROSECOND)))
        }
    }
}
