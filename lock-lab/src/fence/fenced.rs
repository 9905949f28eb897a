//! A resource protected by fencing tokens, recording every write it accepts or rejects.

use std::sync::{Mutex, PoisonError};

use super::clock::monotonic_ns;

/// One write attempt as the resource saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    /// The writer's client id.
    pub client: usize,
    /// The fencing token the write carried.
    pub token: u64,
    /// When the resource judged it, on the system-wide monotonic clock.
    pub at_ns: u64,
    /// Whether it was accepted.
    pub accepted: bool,
}

/// Accepts a write only when its fencing token is at least the highest it has seen, as a
/// storage service that checks tokens would (Kleppmann's fix for paused or partitioned holders).
#[derive(Debug, Default)]
pub struct FencedResource {
    state: Mutex<FencedState>,
}

#[derive(Debug, Default)]
struct FencedState {
    highest: u64,
    writes: Vec<Write>,
}

impl FencedResource {
    /// An empty resource.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attempts a write with `token`; returns whether it was accepted.
    pub fn write(&self, client: usize, token: u64) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let accepted = token >= state.highest;
        if accepted {
            state.highest = token;
        }
        state.writes.push(Write {
            client,
            token,
            at_ns: monotonic_ns(),
            accepted,
        });
        accepted
    }

    /// Every write attempt so far, in the order the resource judged them.
    pub fn writes(&self) -> Vec<Write> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .writes
            .clone()
    }
}
