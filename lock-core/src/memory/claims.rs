//! Semaphores and read-write locks in memory: each name's holders and its queue of waiting
//! acquisitions, under one mutex, with the grant rule every backend must match.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::backend::{ClaimVerdict, claim_verdict};
use crate::{Claim, LockName, Result};

/// Semaphores, read-write locks and elections live apart even under one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Semaphore,
    RwLock,
    /// An election: write holds only, one at a time, each a leadership.
    Election,
}

impl Kind {
    pub(super) fn of(claim: Claim) -> Self {
        match claim {
            Claim::Permit { .. } => Self::Semaphore,
            Claim::Read | Claim::Write => Self::RwLock,
        }
    }
}

pub(super) type Key = (Kind, LockName);

/// Every claimed name's entry, under one mutex.
pub(super) type ClaimEntries = Mutex<HashMap<Key, ClaimEntry>>;

#[derive(Debug, Default)]
pub(super) struct ClaimEntry {
    /// The last fencing token granted for this name.
    pub(super) fence: u64,
    /// How many holds were ever granted (an election's term: one per leader).
    pub(super) term: u64,
    pub(super) holders: Vec<ClaimHolder>,
    /// Waiting acquisitions in arrival order.
    pub(super) queue: VecDeque<Queued>,
    next_ticket: u64,
    /// Bumped by every change that may let a waiter in (a release, a waiter leaving), and on
    /// an election by every grant and new label too, for its observers.
    pub(super) version: u64,
    /// Wakes waiters on such a change.
    pub(super) changed: Arc<Notify>,
}

#[derive(Debug)]
pub(super) struct ClaimHolder {
    pub(super) owner: u128,
    pub(super) claim: Claim,
    pub(super) lease_end: Instant,
    pub(super) label: Arc<str>,
    pub(super) fence: u64,
    pub(super) term: u64,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Queued {
    pub(super) ticket: u64,
    pub(super) claim: Claim,
}

/// What the grant rule says about one acquisition.
pub(super) type Verdict = ClaimVerdict<Instant>;

pub(super) fn lock(entries: &ClaimEntries) -> MutexGuard<'_, HashMap<Key, ClaimEntry>> {
    entries.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ClaimEntry {
    /// Drops holders whose lease has ended; waiters hear of it.
    pub(super) fn expire(&mut self, now: Instant) {
        let before = self.holders.len();
        self.holders.retain(|holder| holder.lease_end > now);
        if self.holders.len() != before {
            self.changed();
        }
    }

    pub(super) fn changed(&mut self) {
        self.version += 1;
        self.changed.notify_waiters();
    }

    /// The grant rule ([`claim_verdict`]) for `claim`, queued with `ticket` (or arriving now,
    /// behind every waiter).
    pub(super) fn verdict(&self, claim: Claim, ticket: Option<u64>) -> Result<Verdict> {
        let ahead = self
            .queue
            .iter()
            .take_while(|queued| Some(queued.ticket) != ticket)
            .map(|queued| queued.claim);
        let holders = self
            .holders
            .iter()
            .map(|holder| (holder.claim, holder.lease_end));
        claim_verdict(holders, ahead, claim)
    }

    /// Puts an acquisition at the back of the queue; returns its ticket.
    pub(super) fn enqueue(&mut self, claim: Claim) -> u64 {
        self.next_ticket += 1;
        self.queue.push_back(Queued {
            ticket: self.next_ticket,
            claim,
        });
        self.next_ticket
    }

    /// Takes a waiter out of the queue (granted or gone); a waiter leaving may let others in.
    pub(super) fn dequeue(&mut self, ticket: u64) {
        self.queue.retain(|queued| queued.ticket != ticket);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn holding(claims: &[Claim]) -> ClaimEntry {
        let mut entry = ClaimEntry::default();
        for claim in claims {
            entry.holders.push(ClaimHolder {
                owner: 0,
                claim: *claim,
                lease_end: Instant::now() + Duration::from_secs(60),
                label: Arc::from("test"),
                fence: 0,
                term: 0,
            });
        }
        entry
    }

    #[tokio::test]
    async fn readers_share_until_a_writer_waits() {
        let mut entry = holding(&[Claim::Read]);
        assert_eq!(entry.verdict(Claim::Read, None).ok(), Some(Verdict::Grant));
        let writer = entry.enqueue(Claim::Write);
        assert!(matches!(
            entry.verdict(Claim::Read, None),
            Ok(Verdict::Wait(_))
        ));
        assert!(matches!(
            entry.verdict(Claim::Write, Some(writer)),
            Ok(Verdict::Wait(Some(_)))
        ));
        entry.holders.clear();
        assert_eq!(
            entry.verdict(Claim::Write, Some(writer)).ok(),
            Some(Verdict::Grant)
        );
    }

    #[tokio::test]
    async fn permits_count_waiters_ahead_and_refuse_another_limit() {
        let mut entry = holding(&[Claim::permit(3)]);
        let first = entry.enqueue(Claim::permit(3));
        let second = entry.enqueue(Claim::permit(3));
        assert_eq!(
            entry.verdict(Claim::permit(3), Some(second)).ok(),
            Some(Verdict::Grant)
        );
        assert!(matches!(
            entry.verdict(Claim::permit(3), None),
            Ok(Verdict::Wait(_))
        ));
        entry.dequeue(first);
        assert_eq!(
            entry.verdict(Claim::permit(3), None).ok(),
            Some(Verdict::Grant)
        );
        assert!(entry.verdict(Claim::permit(4), None).is_err());
    }
}
