//! The in-process queue behind the handoff floors: who holds a name's relay and who waits for
//! it, in order. The floors keep their queue here, with no table, key, lease or fencing, so
//! that what they measure on the server is the wake-up alone.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio::sync::Notify;

/// One name's relay, shared by every client of it in this process.
#[derive(Debug, Default)]
pub struct Relay {
    /// Whether someone holds it, and the ids waiting for it, first first.
    state: Mutex<(bool, VecDeque<usize>)>,
    next_id: Mutex<usize>,
}

/// The relay of `name` (callers prefix it with their server, so floors never share one).
pub fn relay(name: &str) -> Arc<Relay> {
    static RELAYS: OnceLock<Mutex<HashMap<String, Arc<Relay>>>> = OnceLock::new();
    let relays = RELAYS.get_or_init(Mutex::default);
    let mut relays = relays.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(relays.entry(name.to_owned()).or_default())
}

impl Relay {
    /// A new client's id.
    pub fn join(&self) -> usize {
        let mut next = self.next_id.lock().unwrap_or_else(PoisonError::into_inner);
        *next += 1;
        *next
    }

    /// Takes the relay when nobody holds it (`true`); otherwise queues `id` (`false`), and the
    /// client waits for its wake-up.
    pub fn take_or_queue(&self, id: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.0 {
            state.1.push_back(id);
            return false;
        }
        state.0 = true;
        true
    }

    /// Passes the relay on: the first waiter's id, which now holds it and must be woken, or
    /// `None` (nobody waits, and the relay is free).
    pub fn pass(&self) -> Option<usize> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let next = state.1.pop_front();
        state.0 = next.is_some();
        next
    }

    /// Waits for the relay as client `id`: takes it when free, else queues and waits for the
    /// wake-up its floor's listener gives on `woken` (a wake-up that came before this wait left
    /// a permit: none is lost).
    pub async fn take(&self, id: usize, woken: &Notify) {
        if !self.take_or_queue(id) {
            woken.notified().await;
        }
    }
}
