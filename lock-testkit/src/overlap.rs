//! The overlap detector every contended test and benchmark passes its critical sections
//! through: it counts entries that find another holder inside and records fencing tokens in
//! entry order.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Counts holders inside the critical section (an overlap is an entry while another holder is
/// inside) and remembers who held last and when they left, for handoff counts and latencies.
#[derive(Debug, Default)]
pub struct OverlapDetector {
    inside: AtomicUsize,
    overlaps: AtomicU64,
    last: Mutex<Last>,
    tokens: Mutex<Vec<u64>>,
}

#[derive(Debug, Default)]
struct Last {
    client: Option<usize>,
    left: Option<Instant>,
}

/// What one entry saw: the previous holder and how long ago it left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The client that held the lock before this entry (`None` for the first).
    pub previous: Option<usize>,
    /// Time since the previous holder left the critical section.
    pub gap: Option<Duration>,
}

impl OverlapDetector {
    /// A detector with no holder inside.
    pub fn new() -> Self {
        Self::default()
    }

    /// `client` enters the critical section under a grant with `fencing_token`.
    pub fn enter(&self, client: usize, fencing_token: u64) -> Entry {
        if self.inside.fetch_add(1, Ordering::SeqCst) != 0 {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(fencing_token);
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = Entry {
            previous: last.client,
            gap: last.left.map(|left| left.elapsed()),
        };
        last.client = Some(client);
        entry
    }

    /// The holder leaves the critical section.
    pub fn leave(&self) {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .left = Some(Instant::now());
        self.inside.fetch_sub(1, Ordering::SeqCst);
    }

    /// Entries that found another holder inside.
    pub fn overlaps(&self) -> u64 {
        self.overlaps.load(Ordering::SeqCst)
    }

    /// The fencing tokens of every entry, in entry order.
    pub fn tokens(&self) -> Vec<u64> {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
