//! The waiters table, per dialect behind one call: an acquisition that waits keeps an entry
//! there, so that `inspect` can count who waits across every process.

use super::{Conn, Db, Owner};
use crate::error::SqlError;
use crate::waiting::ENTRY_LIFETIME;

impl Db {
    /// Records `waiter` as waiting for `name`, or extends its entry by
    /// [`ENTRY_LIFETIME`], on `conn` (after the try's statement on it).
    pub(crate) async fn register(
        &self,
        conn: &mut Conn,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        with_conn!(self, conn, (db, conn) => db.register(conn, name, waiter, ENTRY_LIFETIME).await)
    }

    /// Removes `waiter`'s entry for `name`, and expired entries of `name`, on `conn` if given,
    /// else on a connection from the pool. Removing an entry that is not there is no error.
    pub(crate) async fn leave(
        &self,
        conn: Option<&mut Conn>,
        name: &str,
        waiter: Owner,
    ) -> Result<(), SqlError> {
        let mut fresh;
        let conn = match conn {
            Some(conn) => conn,
            None => {
                fresh = self.connection().await?;
                &mut fresh
            }
        };
        with_conn!(self, conn, (db, conn) => db.leave(conn, name, waiter).await)
    }
}
