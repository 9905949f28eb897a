//! Following an election: the current leader first, then every change, pushed by the store.

use std::time::Duration;

use futures_util::{Stream, StreamExt};

use super::leader::{Leader, LeaderChange, Missed, missed};
use crate::{DistributedLock, LeaderTicks, LockName, Result};

/// How often an observer re-reads the leader without a push: the bound on how late it learns of
/// a change whose push was lost with its connection.
pub const DEFAULT_OBSERVER_POLL: Duration = Duration::from_secs(5);

/// How long an observer pauses after an error before it asks the store again.
const PAUSE_AFTER_ERROR: Duration = Duration::from_millis(200);

/// Follows one election for a service that only needs to know who leads: made by
/// [`ElectionExt::observe`](crate::ElectionExt::observe).
///
/// The first change is the leader at the time of the first call (or `None`); every later one
/// is a new leader, a new published value, or the leader leaving. Epochs rise from change to
/// change; a leader that came and went between two reads is counted in
/// [`LeaderChange::missed`], never passed over in silence.
pub struct LeaderObserver<'a, L: ?Sized> {
    lock: &'a L,
    name: LockName,
    ticks: Option<LeaderTicks>,
    /// The leader last reported; `None` before the first change.
    reported: Option<Option<Leader>>,
    /// The term of the last reported leader that had one.
    last_term: Option<u64>,
    poll: Duration,
    failed: bool,
}

impl<'a, L: DistributedLock + ?Sized> LeaderObserver<'a, L> {
    pub(crate) fn new(lock: &'a L, name: LockName) -> Self {
        Self {
            lock,
            name,
            ticks: None,
            reported: None,
            last_term: None,
            poll: DEFAULT_OBSERVER_POLL,
            failed: false,
        }
    }

    /// Re-reads the leader at least this often, push or not (default
    /// [`DEFAULT_OBSERVER_POLL`]).
    #[must_use]
    pub fn poll_every(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// The next change: the current leader on the first call, then each change as the store
    /// pushes it (or the poll finds it).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a change counts as seen only once it is returned, so a call dropped midway
    /// loses nothing and the next call reports it.
    ///
    /// # Errors
    ///
    /// The backend's errors while subscribing or reading (`Unsupported` where it has no
    /// elections). The observer stays usable: the next call subscribes again after a short
    /// pause, and reports what changed meanwhile.
    pub async fn next_change(&mut self) -> Result<LeaderChange> {
        if self.failed {
            tokio::time::sleep(PAUSE_AFTER_ERROR).await;
        }
        let next = self.follow().await;
        self.failed = next.is_err();
        next
    }

    /// The changes as a stream that never ends; an error is an item, and the stream goes on.
    pub fn into_stream(self) -> impl Stream<Item = Result<LeaderChange>> + Send + 'a {
        futures_util::stream::unfold(self, |mut observer| async move {
            let change = observer.next_change().await;
            Some((change, observer))
        })
    }

    async fn follow(&mut self) -> Result<LeaderChange> {
        loop {
            // Subscribed before the read, so a change after the read is pushed.
            if self.ticks.is_none() {
                self.ticks = Some(self.lock.watch_leader(&self.name).await?);
            }
            let now = self.lock.read_leader(&self.name).await?;
            if let Some(change) = self.change_to(now) {
                return Ok(change);
            }
            let Some(ticks) = self.ticks.as_mut() else {
                continue;
            };
            let ended = tokio::select! {
                tick = ticks.next() => tick.is_none(),
                () = tokio::time::sleep(self.poll) => false,
            };
            if ended {
                self.ticks = None; // the push source ended: subscribe again
            }
        }
    }

    /// The change from what was last reported to `now`, recorded as reported; `None` when
    /// nothing changed.
    fn change_to(&mut self, now: Option<Leader>) -> Option<LeaderChange> {
        let missed = match (&self.reported, &now) {
            (Some(before), _) if *before == now => return None,
            (Some(before), Some(leader)) => missed(before.as_ref(), self.last_term, leader),
            _ => Missed::Nothing,
        };
        if let Some(term) = now.as_ref().and_then(|leader| leader.term) {
            self.last_term = Some(term);
        }
        self.reported = Some(now.clone());
        Some(LeaderChange {
            leader: now,
            missed,
        })
    }
}

impl<L: ?Sized> std::fmt::Debug for LeaderObserver<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderObserver")
            .field("name", &self.name)
            .field("reported", &self.reported)
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}
