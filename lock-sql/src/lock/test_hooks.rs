//! Hooks for lock-sql's own tests (feature `testing`): counters of the statements a service
//! sent, and ways to reach into its parked connections and holds that no user needs.

use lock_core::Result;

use super::SqlLock;

impl SqlLock {
    /// How many tries this service's acquisitions have made: each an acquire statement, or on
    /// MySQL/MariaDB and SQLite, once a waiter entry is placed, a read of the place in line
    /// (followed by the acquire statement when the turn came).
    #[doc(hidden)]
    pub fn acquire_statements(&self) -> u64 {
        self.steps.tries.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many statements the renewals of this service's holds have taken, where renewals
    /// are gathered into one statement (PostgreSQL); `None` elsewhere.
    #[doc(hidden)]
    pub fn renewal_statements(&self) -> Option<u64> {
        self.inner().db.renewal_statements()
    }

    /// How many statements this service's releases have sent, on PostgreSQL, where a release
    /// sends `release_alone.sql` (no waiter expected), `release.sql` (hands the lock to the
    /// first waiter), or the first and then the second: `[release_alone.sql, release.sql]`;
    /// `None` elsewhere.
    #[doc(hidden)]
    pub fn release_statements(&self) -> Option<[u64; 2]> {
        self.inner().db.release_statements()
    }

    /// How many first tries this service's acquisitions sent on names not marked for waiters,
    /// on PostgreSQL, where such a try sends `acquire_free.sql` (the upsert) or, on a lock row
    /// the service saw exist, an `UPDATE`: `take_row.sql` when the acquisition will wait (a
    /// refusal forgets the row, and `acquire_first.sql` follows), else `acquire_row.sql`,
    /// followed by the upsert when it finds the row gone:
    /// `[acquire_free.sql, acquire_row.sql, take_row.sql]`; `None` elsewhere.
    #[doc(hidden)]
    pub fn first_try_statements(&self) -> Option<[u64; 3]> {
        self.inner().db.first_try_statements()
    }

    /// Ends the current hold on `name` behind its holder's back, keeping the fencing counter.
    #[doc(hidden)]
    pub async fn sever(&self, name: impl lock_core::IntoLockName) -> Result<bool> {
        let name = name.into_lock_name()?;
        let inner = self.inner();
        inner.ensure_schema().await?;
        inner
            .db
            .sever(name.as_str())
            .await
            .map_err(|error| inner.error(error, "sever").with_lock(&name))
    }

    /// Parks one of this service's connections on `name`, which the caller holds, again and
    /// again for a millisecond at a time, and interrupts it `rings` times meanwhile as a
    /// release rings its first waiter (MySQL/MariaDB): the slowest of those rings. `None` on
    /// the dialects that park no connection.
    #[doc(hidden)]
    pub async fn slowest_ring(
        &self,
        name: impl lock_core::IntoLockName,
        rings: u32,
    ) -> Result<Option<std::time::Duration>> {
        let name = name.into_lock_name()?;
        let inner = self.inner();
        inner.ensure_schema().await?;
        inner
            .db
            .slowest_ring(name.as_str(), rings)
            .await
            .map_err(|error| inner.error(error, "ring").with_lock(&name))
    }

    /// Makes this service park its waiters' connections as on a server whose `GET_LOCK` waits
    /// whole seconds (MySQL), whatever this server does: `false` on the dialects that park
    /// no connection.
    #[doc(hidden)]
    pub fn park_whole_seconds(&self) -> bool {
        self.inner().db.park_whole_seconds()
    }

    /// How many park statements this service's parked connections have sent (MySQL/MariaDB);
    /// `None` elsewhere.
    #[doc(hidden)]
    pub fn parks_sent(&self) -> Option<u64> {
        self.inner().db.parks_sent()
    }

    /// The server's id of the connection that holds the user lock this service's parked
    /// connections wait for (MySQL/MariaDB), once one was opened; `None` elsewhere.
    #[doc(hidden)]
    pub fn parking_anchor(&self) -> Option<u64> {
        self.inner().db.parking_anchor()
    }
}
