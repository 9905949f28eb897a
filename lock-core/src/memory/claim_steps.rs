//! The engine's steps for one semaphore or read-write acquisition in memory.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::claim_held::ClaimHeld;
use super::claims::{ClaimEntries, ClaimHolder, Key, Kind, Verdict, lock};
use super::steps::lease_end;
use crate::backend::{Busy, Deadline, Grant, LockSteps, Try};
use crate::{AcquireOptions, Claim, LockName, Result};

/// The steps of acquisitions of one claim; made per acquisition (the claim is its state).
#[derive(Debug)]
pub(crate) struct ClaimSteps {
    pub(super) entries: Arc<ClaimEntries>,
    pub(super) claim: Claim,
    /// The object the claim is on: the claim's own kind, or an election (write claims).
    pub(super) kind: Kind,
    pub(super) leases: crate::backend::Leases,
}

/// One acquisition: its key and lease, and once it waits, its place in the queue.
#[derive(Debug)]
pub(crate) struct ClaimAttempt {
    key: Key,
    lease: Duration,
    label: Arc<str>,
    /// The entry's change signal and the version the last try saw.
    seen: Option<(Arc<Notify>, u64)>,
    place: Option<Place>,
}

/// A waiter's ticket in its name's queue, given back when the attempt ends.
#[derive(Debug)]
struct Place {
    entries: Arc<ClaimEntries>,
    key: Key,
    ticket: u64,
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Some(entry) = lock(&self.entries).get_mut(&self.key) {
            if entry
                .queue
                .iter()
                .any(|queued| queued.ticket == self.ticket)
            {
                entry.dequeue(self.ticket);
                entry.changed();
            }
        }
    }
}

#[async_trait]
impl LockSteps for ClaimSteps {
    type Attempt = ClaimAttempt;

    fn backend(&self) -> &'static str {
        "memory"
    }

    fn server(&self) -> &str {
        "memory"
    }

    fn leases(&self) -> &crate::backend::Leases {
        &self.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> ClaimAttempt {
        ClaimAttempt {
            key: (self.kind, name.clone()),
            lease: options.lease,
            label: Arc::clone(&options.owner_label),
            seen: None,
            place: None,
        }
    }

    async fn try_once(&self, attempt: &mut ClaimAttempt) -> Result<Try> {
        let mut entries = lock(&self.entries);
        let entry = entries.entry(attempt.key.clone()).or_default();
        let now = Instant::now();
        entry.expire(now);
        let ticket = attempt.place.as_ref().map(|place| place.ticket);
        if let Verdict::Wait(until) = entry.verdict(self.claim, ticket)? {
            attempt.seen = Some((Arc::clone(&entry.changed), entry.version));
            if attempt.place.is_none() {
                attempt.place = Some(Place {
                    entries: Arc::clone(&self.entries),
                    key: attempt.key.clone(),
                    ticket: entry.enqueue(self.claim),
                });
            }
            let busy = Busy::pushed();
            return Ok(Try::Busy(match until {
                Some(until) => busy.within(until.saturating_duration_since(now)),
                None => busy,
            }));
        }
        if let Some(ticket) = ticket {
            entry.dequeue(ticket);
        }
        let owner = rand::random::<u128>();
        entry.fence += 1;
        entry.term += 1;
        entry.holders.push(ClaimHolder {
            owner,
            claim: self.claim,
            lease_end: lease_end(now, attempt.lease),
            label: Arc::clone(&attempt.label),
            fence: entry.fence,
            term: entry.term,
        });
        if self.kind == Kind::Election {
            entry.changed(); // observers hear of the new leader
        }
        let fence = entry.fence;
        drop(entries);
        // Granted: the place is no longer in the queue, so dropping it changes nothing.
        attempt.place = None;
        let held = ClaimHeld::new(Arc::clone(&self.entries), attempt.key.clone(), owner);
        Ok(Try::Granted(Grant::new(fence, Arc::new(held), now)))
    }

    async fn wait(&self, attempt: &mut ClaimAttempt, until: Deadline) {
        let Some((changed, seen)) = attempt.seen.clone() else {
            return until.sleep().await;
        };
        let notified = changed.notified();
        tokio::pin!(notified);
        // Registered before the re-check, so a change in between is not missed.
        notified.as_mut().enable();
        let version = lock(&self.entries)
            .get(&attempt.key)
            .map(|entry| entry.version);
        if version != Some(seen) {
            return;
        }
        tokio::select! {
            () = notified => {}
            () = until.sleep() => {}
        }
    }

    async fn clean_up(&self, _attempt: &mut ClaimAttempt) -> Result<()> {
        Ok(())
    }

    /// A try changes the map under its mutex without awaiting, and a waiter's place leaves
    /// the queue when the attempt is dropped: nothing is ever left behind.
    fn needs_cleanup(&self, _attempt: &ClaimAttempt) -> bool {
        false
    }
}
