//! The lock rows this service has seen. distlock never deletes a lock row, so a try on a name
//! seen here can take the row over with an `UPDATE` (`acquire_row.sql`), which InnoDB runs
//! for less than the upsert (`acquire.sql`) that a row never seen needs. A row deleted behind
//! our back (by an administrator) is found missing by that `UPDATE` and forgotten here.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

/// At most this many names are remembered: when the set is full it starts over, so a service
/// that cycles through many more names keeps a few hundred kilobytes at most, and pays one
/// upsert per name per cycle.
const REMEMBERED: usize = 4096;

/// Names whose lock row this service saw exist.
#[derive(Debug, Default)]
pub(super) struct KnownRows(Mutex<HashSet<Box<str>>>);

impl KnownRows {
    fn names(&self) -> std::sync::MutexGuard<'_, HashSet<Box<str>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn contains(&self, name: &str) -> bool {
        self.names().contains(name)
    }

    /// Remembers that `name`'s row exists.
    pub(super) fn insert(&self, name: &str) {
        let mut names = self.names();
        if names.contains(name) {
            return;
        }
        if names.len() >= REMEMBERED {
            names.clear();
        }
        names.insert(name.into());
    }

    /// Forgets `name`, whose row was found missing.
    pub(super) fn forget(&self, name: &str) {
        self.names().remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_remembered_until_forgotten() {
        let rows = KnownRows::default();
        assert!(!rows.contains("a"));
        rows.insert("a");
        rows.insert("a");
        assert!(rows.contains("a"));
        rows.forget("a");
        assert!(!rows.contains("a"));
    }

    #[test]
    fn a_full_set_starts_over() {
        let rows = KnownRows::default();
        for index in 0..REMEMBERED {
            rows.insert(&index.to_string());
        }
        assert_eq!(rows.names().len(), REMEMBERED);
        rows.insert("one more");
        assert_eq!(rows.names().len(), 1);
        assert!(rows.contains("one more"));
    }
}
