//! A history of grants, releases, lost signals and writes, and the checker that judges it.

use std::sync::{Mutex, PoisonError};

use super::clock::monotonic_ns;
use super::fenced::Write;

/// What happened to a client's hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldEvent {
    /// The lock was granted with this fencing token.
    Granted(u64),
    /// The holder released it.
    Released,
    /// The holder's lost signal fired.
    Lost,
    /// The holder's process was killed: it believes nothing any more.
    Killed,
}

/// One event, stamped with the system-wide monotonic clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The client it happened to.
    pub client: usize,
    /// What happened.
    pub event: HoldEvent,
    /// When, in nanoseconds of `CLOCK_MONOTONIC`.
    pub at_ns: u64,
}

/// Records hold events from any number of tasks (or, merged, processes).
#[derive(Debug, Default)]
pub struct History {
    events: Mutex<Vec<Event>>,
}

impl History {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `event` for `client` now.
    pub fn record(&self, client: usize, event: HoldEvent) {
        self.record_at(client, event, monotonic_ns());
    }

    /// Records `event` for `client` at `at_ns` on the system-wide monotonic clock: for events
    /// another process stamped and reported.
    pub fn record_at(&self, client: usize, event: HoldEvent, at_ns: u64) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Event {
                client,
                event,
                at_ns,
            });
    }

    /// Every event so far, in time order.
    pub fn events(&self) -> Vec<Event> {
        let mut events = self
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        events.sort_by_key(|event| event.at_ns);
        events
    }
}

/// One hold reconstructed from a history: from grant to release, loss, or the history's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hold {
    /// The holder.
    pub client: usize,
    /// Its fencing token.
    pub token: u64,
    /// When it was granted.
    pub granted_ns: u64,
    /// When the holder stopped believing it held the lock (`u64::MAX`: never, in this history).
    pub ended_ns: u64,
    /// When its lost signal fired, if it did.
    pub lost_ns: Option<u64>,
}

/// What the checker found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Holds granted.
    pub grants: usize,
    /// Pairs of holds that overlapped in real time (both holders believed they held).
    pub overlaps: usize,
    /// Grants whose fencing token was not larger than the previous grant's.
    pub token_order_violations: usize,
    /// Writes attempted by a holder after a later-granted holder had written.
    pub stale_writes_attempted: usize,
    /// Of those, writes the resource accepted (fencing must keep this at 0).
    pub stale_writes_accepted: usize,
    /// Holds that another client was granted while the holder still believed it held.
    pub holds_superseded: usize,
    /// Holds whose lost signal fired before another client was granted the lock: the holder
    /// knew in time.
    pub lost_before_next_grant: usize,
    /// Holds whose lost signal fired only after another client was granted the lock.
    pub lost_after_next_grant: usize,
}

/// Rebuilds holds from `events` (in time order).
pub fn holds(events: &[Event]) -> Vec<Hold> {
    let mut holds: Vec<Hold> = Vec::new();
    for event in events {
        let open = holds
            .iter_mut()
            .rev()
            .find(|h| h.client == event.client && h.ended_ns == u64::MAX);
        match (event.event, open) {
            (HoldEvent::Granted(token), _) => holds.push(Hold {
                client: event.client,
                token,
                granted_ns: event.at_ns,
                ended_ns: u64::MAX,
                lost_ns: None,
            }),
            (HoldEvent::Released | HoldEvent::Killed, Some(hold)) => hold.ended_ns = event.at_ns,
            (HoldEvent::Lost, Some(hold)) => {
                hold.ended_ns = event.at_ns;
                hold.lost_ns = Some(event.at_ns);
            }
            (_, None) => {}
        }
    }
    holds
}

/// Judges a history and the resource's writes.
pub fn check(events: &[Event], writes: &[Write]) -> Verdict {
    let holds = holds(events);
    let mut verdict = Verdict {
        grants: holds.len(),
        ..Verdict::default()
    };
    for (index, hold) in holds.iter().enumerate() {
        if index > 0 && hold.token <= holds[index - 1].token {
            verdict.token_order_violations += 1;
        }
        let later = &holds[index + 1..];
        verdict.overlaps += later
            .iter()
            .filter(|other| other.granted_ns < hold.ended_ns)
            .count();
        if later
            .iter()
            .any(|other| other.client != hold.client && other.granted_ns < hold.ended_ns)
        {
            verdict.holds_superseded += 1;
        }
        let next_grant = later.iter().find(|other| other.client != hold.client);
        if let (Some(lost), Some(next)) = (hold.lost_ns, next_grant) {
            if lost < next.granted_ns {
                verdict.lost_before_next_grant += 1;
            } else {
                verdict.lost_after_next_grant += 1;
            }
        }
    }
    let hold_of = |write: &Write| {
        holds
            .iter()
            .rposition(|h| h.client == write.client && h.granted_ns <= write.at_ns)
    };
    let mut newest_written: Option<usize> = None;
    for write in writes {
        let Some(hold) = hold_of(write) else { continue };
        if newest_written.is_some_and(|newest| newest > hold) {
            verdict.stale_writes_attempted += 1;
            verdict.stale_writes_accepted += usize::from(write.accepted);
        } else if write.accepted {
            newest_written = Some(hold);
        }
    }
    verdict
}
