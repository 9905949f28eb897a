//! A waiting acquisition's parked connection, on the dialect that has one: MySQL and MariaDB,
//! whose releases interrupt the first waiter's parked statement (see `mysql::sleepers`).
//! PostgreSQL wakes its waiters by notifications, and SQLite's read their place in line.

use super::Db;

#[cfg(feature = "mysql")]
pub(crate) use super::mysql::{Bell, PARK_AT_MOST, Woken};
#[cfg(not(feature = "mysql"))]
pub(crate) use none::{Bell, PARK_AT_MOST, Woken};

impl Db {
    /// An idle connection for a waiter to park, without I/O; `None` on the dialects that park
    /// none, or when none is idle.
    pub(crate) fn idle_bell(&self) -> Option<Bell> {
        match self {
            #[cfg(feature = "mysql")]
            Db::MySql(db) => db.idle_bell(),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// A connection for a waiter to park, opened if none is idle; `None` on the dialects that
    /// park none, when the service parks as many as it may, or when none could be opened.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a connection being opened when it is dropped is not counted.
    pub(crate) async fn bell(&self) -> Option<Bell> {
        match self {
            #[cfg(feature = "mysql")]
            Db::MySql(db) => db.bell().await,
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Used by the test hook `SqlLock::slowest_ring` only: `None` on the dialects that park
    /// no connection.
    #[cfg(feature = "testing")]
    #[cfg_attr(not(feature = "mysql"), allow(unused_variables))]
    pub(crate) async fn slowest_ring(
        &self,
        name: &str,
        rings: u32,
    ) -> Result<Option<std::time::Duration>, crate::error::SqlError> {
        match self {
            #[cfg(feature = "mysql")]
            Db::MySql(db) => db.slowest_ring(name, rings).await.map(Some),
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    /// Used by the test hook `SqlLock::park_whole_seconds` only: `false` on the dialects that
    /// park no connection.
    #[cfg(feature = "testing")]
    pub(crate) fn park_whole_seconds(&self) -> bool {
        match self {
            #[cfg(feature = "mysql")]
            Db::MySql(db) => {
                db.park_whole_seconds();
                true
            }
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Used by the test hook `SqlLock::parks_sent` only.
    #[cfg(feature = "testing")]
    pub(crate) fn parks_sent(&self) -> Option<u64> {
        match self {
            #[cfg(feature = "mysql")]
            Db::MySql(db) => Some(db.parks_sent()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Used by the test hook `SqlLock::parking_anchor` only.
    #[cfg(feature = "testing")]
    pub(crate) fn parking_anchor(&self) -> Option<u64> {
        match self {
            #[cfg(feature = "mysql")]
            Db::MySql(db) => db.parking_anchor(),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

/// Without MySQL no connection is parked: a bell never exists.
#[cfg(not(feature = "mysql"))]
mod none {
    use std::time::Duration;

    use crate::db::Owner;
    use crate::error::SqlError;

    pub(crate) const PARK_AT_MOST: Duration = Duration::from_secs(1);

    /// The engine matches these; without a parked connection nothing makes them.
    #[allow(dead_code)]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Woken {
        Turn,
        Rung,
        SleptOut,
        RolledBack,
    }

    #[derive(Debug)]
    pub(crate) enum Bell {}

    impl Bell {
        pub(crate) fn id(&self) -> u64 {
            match *self {}
        }

        pub(crate) fn parks_for(&self, _: Duration) -> bool {
            match *self {}
        }

        pub(crate) async fn park(
            &mut self,
            _: &str,
            _: Owner,
            _: Owner,
            _: Duration,
            _: bool,
        ) -> Result<Woken, SqlError> {
            match *self {}
        }
    }
}
