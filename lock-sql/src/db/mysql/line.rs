//! A MySQL or MariaDB acquisition's place in line: the lock row's mark and the waiter entry,
//! placed, refreshed and removed.

use std::sync::atomic::Ordering;
use std::time::Duration;

use sqlx::pool::PoolConnection;

use super::{MICROSECOND, MyDb};
use crate::db::waiters::Terms;
use crate::db::{Owner, settle, whole};
use crate::error::{SqlError, timed};

/// A granted waiter's removal purges the name's expired entries (left by processes that died
/// waiting) once in this many; a waiter that gives up always does.
pub(super) const PURGE_EVERY: u64 = 64;

impl MyDb {
    /// Marks the lock row (see `wait_mark.sql`), then places or refreshes the entry, with
    /// the terms a release grants it the lock on: in that order, so that no entry outlives
    /// the mark.
    pub(crate) async fn register(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        waiter: Owner,
        lifetime: Duration,
        sleeper: Option<u64>,
        terms: Terms<'_>,
    ) -> Result<(), SqlError> {
        let micros = whole(lifetime, MICROSECOND);
        let mark = sqlx::query(self.sql.wait_mark.clone())
            .bind(name.as_bytes())
            .bind(micros)
            .bind(micros);
        let result = timed(self.timeout, mark.execute(&mut **conn)).await;
        settle(conn, result)?;
        let query = sqlx::query(self.sql.wait_register.clone())
            .bind(name.as_bytes())
            .bind(waiter.as_bytes())
            .bind(micros)
            .bind(sleeper)
            .bind(terms.owner.as_bytes())
            .bind(whole(terms.lease, MICROSECOND))
            .bind(terms.label.as_bytes())
            .bind(micros)
            .bind(sleeper);
        let result = timed(self.timeout, query.execute(&mut **conn)).await;
        settle(conn, result).map(drop)
    }

    /// Removes the entry and the name's expired ones, retrying once when InnoDB picked the
    /// statement as a deadlock victim (it locks the name's range to purge expired entries).
    pub(crate) async fn leave(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        self.send_twice(conn, || {
            sqlx::query(self.sql.wait_leave.clone())
                .bind(name.as_bytes())
                .bind(waiter.as_bytes())
        })
        .await
        .map(drop)
    }

    /// Removes the entry of a waiter granted the lock, by its key alone
    /// (`wait_leave_granted.sql`): on the handoff's path, it waits for no other waiter's
    /// entry. Every [`PURGE_EVERY`]th removal is [`MyDb::leave`]'s, which purges.
    pub(crate) async fn leave_granted(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        if self.granted_leaves.fetch_add(1, Ordering::Relaxed) % PURGE_EVERY == 0 {
            return self.leave(conn, name, waiter).await;
        }
        self.send_twice(conn, || {
            sqlx::query(self.sql.wait_leave_granted.clone())
                .bind(name.as_bytes())
                .bind(waiter.as_bytes())
        })
        .await
        .map(drop)
    }
}
