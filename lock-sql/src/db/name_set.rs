//! A bounded set of lock names, for what a service learned about a name and acts on next time:
//! MySQL/MariaDB and PostgreSQL remember the lock rows they saw exist (a try on one takes the
//! row over with an `UPDATE`), PostgreSQL also the names it found marked for waiters (the next
//! try or release of one goes straight to the statement that reads the line or hands the lock
//! over). Only speed depends on it: a name missing or remembered wrongly costs one statement
//! more, never a wrong outcome.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

/// At most this many names are remembered: when the set is full it starts over, so a service
/// that cycles through many more names keeps a few hundred kilobytes at most, and pays the
/// statement the set saves once per name per cycle.
const REMEMBERED: usize = 4096;

/// Lock names this service remembers, up to [`REMEMBERED`] of them.
#[derive(Debug, Default)]
pub(super) struct NameSet(Mutex<HashSet<Box<str>>>);

impl NameSet {
    fn names(&self) -> std::sync::MutexGuard<'_, HashSet<Box<str>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn contains(&self, name: &str) -> bool {
        self.names().contains(name)
    }

    /// Remembers `name`.
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

    /// Forgets `name`.
    pub(super) fn forget(&self, name: &str) {
        self.names().remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_remembered_until_forgotten() {
        let rows = NameSet::default();
        assert!(!rows.contains("a"));
        rows.insert("a");
        rows.insert("a");
        assert!(rows.contains("a"));
        rows.forget("a");
        assert!(!rows.contains("a"));
    }

    #[test]
    fn a_full_set_starts_over() {
        let rows = NameSet::default();
        for index in 0..REMEMBERED {
            rows.insert(&index.to_string());
        }
        assert_eq!(rows.names().len(), REMEMBERED);
        rows.insert("one more");
        assert_eq!(rows.names().len(), 1);
        assert!(rows.contains("one more"));
    }
}
