//! A release on MySQL and MariaDB: the release statement, and when waiters may be in line, the
//! grant to the first of them and the ring that tells it.

use sqlx::pool::PoolConnection;

use super::{MyDb, contended, sleepers};
use crate::db::{Owner, settle};
use crate::error::{SqlError, timed};

impl MyDb {
    /// Releases our live hold of `name`, and when the lock row says a waiter entry may be
    /// live, grants the lock to the first waiter in line (`grant_head.sql`) and interrupts
    /// its parked statement, if it parks one, so that it takes the grant up at once. Each
    /// statement is retried once when the server rolled it back for contention (changing
    /// nothing). The release stands when the grant fails on the server: the first waiter
    /// then finds its turn itself, within a park.
    ///
    /// At a name where this service last found a line, the release and the grant are one
    /// statement (`release_grant.sql`); finding nobody in line, the service forgets the line.
    pub(crate) async fn release(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        owner: Owner,
    ) -> Result<bool, SqlError> {
        if self.lined.contains(name) {
            return self.release_granting(conn, name, owner).await;
        }
        let done = self
            .send_twice(conn, || {
                sqlx::query(self.sql.release.clone())
                    .bind(name.as_bytes())
                    .bind(owner.as_bytes())
            })
            .await?;
        let released = done.rows_affected() == 1;
        if released && done.last_insert_id() != 0 {
            granted_or_noted(self.grant_head(conn, name, Some(owner)).await)?;
        }
        Ok(released)
    }

    /// Releases our live hold of `name` and grants the lock to the first waiter in line in one
    /// statement, then interrupts that waiter's parked statement, if it parks one.
    async fn release_granting(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        owner: Owner,
    ) -> Result<bool, SqlError> {
        let done = self
            .send_twice(conn, || {
                sqlx::query(self.sql.release_grant.clone())
                    .bind(name.as_bytes())
                    .bind(owner.as_bytes())
                    .bind(name.as_bytes())
                    .bind(owner.as_bytes())
            })
            .await?;
        let released = done.rows_affected() == 1;
        match done.last_insert_id() {
            0 if released => self.lined.forget(name),
            0 | 1 => {}
            parked => {
                // The release committed: a failed ring leaves the waiter to find its grant
                // within a park.
                let rung = sleepers::ring(conn, parked - 1, self.timeout).await;
                granted_or_noted(settle(conn, rung))?;
            }
        }
        Ok(released)
    }

    /// After a release that found a waiter entry of `name` may be live: grants the lock to
    /// the first waiter in line, passing over an entry of the releasing owner `released`, and
    /// interrupts that waiter's parked statement, if it parks one (see `grant_head.sql`).
    pub(super) async fn grant_head(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        name: &str,
        released: Option<Owner>,
    ) -> Result<(), SqlError> {
        let released = released.as_ref().map(Owner::as_bytes);
        let granted = self
            .send_twice(conn, || {
                sqlx::query(self.sql.grant_head.clone())
                    .bind(name.as_bytes())
                    .bind(released)
                    .bind(name.as_bytes())
            })
            .await?;
        if let sleeper @ 1.. = granted.last_insert_id() {
            let rung = sleepers::ring(conn, sleeper, self.timeout).await;
            settle(conn, rung)?;
        }
        Ok(())
    }

    /// Sends the statement `query` makes on `conn`, and once more when the server rolled it
    /// back for contention.
    pub(super) async fn send_twice<'q>(
        &self,
        conn: &mut PoolConnection<sqlx::MySql>,
        query: impl Fn() -> sqlx::query::Query<'q, sqlx::MySql, sqlx::mysql::MySqlArguments>,
    ) -> Result<sqlx::mysql::MySqlQueryResult, SqlError> {
        let mut retried = false;
        loop {
            let result = timed(self.timeout, query().execute(&mut **conn)).await;
            match settle(conn, result) {
                Err(SqlError::Sqlx(error)) if contended(&error) && !retried => retried = true,
                other => return other,
            }
        }
    }
}

/// A grant's outcome after the release it follows committed: an error the server reported
/// is noted and passed over, since the release stands; any other (the connection failed or
/// timed out) is returned, so that the connection is not reused.
fn granted_or_noted(granted: Result<(), SqlError>) -> Result<(), SqlError> {
    match granted {
        Err(SqlError::Sqlx(error)) if error.as_database_error().is_some() => {
            tracing::debug!(%error, "granting the first waiter failed; it takes its turn itself");
            Ok(())
        }
        other => other,
    }
}
