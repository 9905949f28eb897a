//! One acquisition's entry in the waiters table, which lets `inspect` count who waits across
//! processes. It is placed when a try finds the lock held and the acquisition will wait
//! (a single try never places one, and neither does an acquisition granted at once),
//! refreshed while it waits, and removed when the acquisition is granted, gives up or is
//! cleaned up; an entry whose process died expires by the database clock. On PostgreSQL the
//! entry also carries the terms a release grants the acquisition the lock on, and the entry's
//! id begins with its service's id, which names the channel that grant is announced on.

use std::time::Duration;

use lock_core::backend::Deadline;
use tokio::time::Instant;

use crate::db::Owner;

/// How often a waiting acquisition refreshes its entry: no more often than a PostgreSQL
/// waiter re-checks anyway.
pub(crate) const REFRESH_EVERY: Duration = Duration::from_secs(5);

/// How long an entry lasts unless refreshed, by the database clock: three refresh intervals,
/// so an entry outlives two late refreshes but not its process by much.
pub(crate) const ENTRY_LIFETIME: Duration = Duration::from_secs(15);

/// How far ahead a PostgreSQL acquisition that places or refreshes its entry marks the lock row
/// for waiters, when the mark would end within the entry's lifetime: past that entry's expiry
/// by a refresh interval, so that a line of waiters refreshing their entries moves the mark
/// about once per interval, not once per refresh.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) const MARK_AHEAD: Duration = ENTRY_LIFETIME.saturating_add(REFRESH_EVERY);

/// The entry of one acquisition.
#[derive(Debug)]
pub(crate) struct WaitEntry {
    /// The entry's id: random and fixed for the acquisition (owner tokens change every try).
    pub(crate) id: Owner,
    /// The acquisition's deadline: a try that finds the lock held after it is the last one.
    deadline: Deadline,
    /// Whether an entry may be on the server: set before the statement that places it is
    /// sent, cleared once a removal succeeded.
    placed: bool,
    /// When the entry needs refreshing; `None` while none was placed.
    refresh_at: Option<Instant>,
}

impl WaitEntry {
    /// The entry `id` of an acquisition that waits up to `wait` from now.
    pub(crate) fn new(wait: Option<Duration>, id: Owner) -> Self {
        Self {
            id,
            deadline: Deadline::after(wait),
            placed: false,
            refresh_at: None,
        }
    }

    /// Whether an entry may be on the server, so that removing it is due.
    pub(crate) fn placed(&self) -> bool {
        self.placed
    }

    /// Whether a try that found the lock held at `now` should place or refresh the entry:
    /// the acquisition will wait, and the entry is missing or due for a refresh.
    pub(crate) fn due(&self, now: Instant) -> bool {
        !self.deadline.passed(now) && self.refresh_at.is_none_or(|at| now >= at)
    }

    /// The statement placing or refreshing the entry is about to be sent.
    pub(crate) fn sending(&mut self) {
        self.placed = true;
    }

    /// The entry was placed or refreshed by a statement sent at `sent`.
    pub(crate) fn refreshed(&mut self, sent: Instant) {
        self.refresh_at = Some(sent + REFRESH_EVERY);
    }

    /// Whether the acquisition waits on at `now` with its entry placed and not yet due for a
    /// refresh: a try then has nothing to send but a read of the line.
    pub(crate) fn waits_on(&self, now: Instant) -> bool {
        !self.deadline.passed(now) && self.refresh_at.is_some_and(|at| now < at)
    }

    /// How soon the next try must come to refresh the entry; `None` while none was placed.
    pub(crate) fn refresh_within(&self, now: Instant) -> Option<Duration> {
        self.refresh_at.map(|at| at.saturating_duration_since(now))
    }

    /// The entry is gone from the server.
    pub(crate) fn removed(&mut self) {
        self.placed = false;
        self.refresh_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_tries_never_place_an_entry() {
        let entry = WaitEntry::new(Some(Duration::ZERO), Owner::random());
        assert!(!entry.due(Instant::now()));
        assert!(!entry.placed());
    }

    #[test]
    fn entries_are_refreshed_on_schedule_and_forgotten_once_removed() {
        let mut entry = WaitEntry::new(None, Owner::random());
        let start = Instant::now();
        assert!(entry.due(start) && entry.refresh_within(start).is_none());
        entry.sending();
        entry.refreshed(start);
        assert!(entry.placed() && !entry.due(start));
        assert_eq!(entry.refresh_within(start), Some(REFRESH_EVERY));
        assert!(entry.due(start + REFRESH_EVERY));
        entry.removed();
        assert!(!entry.placed() && entry.refresh_within(start).is_none());
    }
}
