//! The occupancy detector the semaphore and read-write cases pass their critical sections
//! through: it counts who is inside at every instant, exactly, under one mutex.

use std::sync::{Mutex, PoisonError};

/// Counts shared holders (semaphore permits, readers) and exclusive holders (writers) inside
/// their critical sections, and keeps the worst it saw.
#[derive(Debug, Default)]
pub struct Occupancy {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    shared: usize,
    exclusive: usize,
    max_shared: usize,
    /// Entries that found a writer inside, or writers that found anyone inside.
    exclusive_overlaps: u64,
    entries: u64,
}

impl Occupancy {
    /// A detector with nobody inside.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A shared holder (a permit or a reader) enters.
    pub fn enter_shared(&self) {
        let mut state = self.state();
        if state.exclusive > 0 {
            state.exclusive_overlaps += 1;
        }
        state.shared += 1;
        state.max_shared = state.max_shared.max(state.shared);
        state.entries += 1;
    }

    /// A shared holder leaves.
    pub fn leave_shared(&self) {
        let mut state = self.state();
        state.shared = state.shared.saturating_sub(1);
    }

    /// An exclusive holder (a writer) enters.
    pub fn enter_exclusive(&self) {
        let mut state = self.state();
        if state.exclusive + state.shared > 0 {
            state.exclusive_overlaps += 1;
        }
        state.exclusive += 1;
        state.entries += 1;
    }

    /// An exclusive holder leaves.
    pub fn leave_exclusive(&self) {
        let mut state = self.state();
        state.exclusive = state.exclusive.saturating_sub(1);
    }

    /// The most shared holders ever inside at once.
    pub fn max_shared(&self) -> usize {
        self.state().max_shared
    }

    /// How many entries broke exclusivity: anyone entering beside a writer, or a writer
    /// entering beside anyone.
    pub fn exclusive_overlaps(&self) -> u64 {
        self.state().exclusive_overlaps
    }

    /// How many entries there were.
    pub fn entries(&self) -> u64 {
        self.state().entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_peak_and_every_overlap_with_a_writer() {
        let occupancy = Occupancy::new();
        occupancy.enter_shared();
        occupancy.enter_shared();
        occupancy.leave_shared();
        occupancy.enter_exclusive();
        assert_eq!(occupancy.exclusive_overlaps(), 1);
        occupancy.enter_shared();
        assert_eq!(occupancy.exclusive_overlaps(), 2);
        assert_eq!(occupancy.max_shared(), 2);
        assert_eq!(occupancy.entries(), 4);
    }
}
