//! What an acquisition that waits knows of its wait: when its entry was refreshed, whether a
//! park may follow a park, and how long a parked wait lasts.

use std::time::Duration;

use lock_core::backend::Busy;
use tokio::time::Instant;

use super::SqlAttempt;
use crate::db::PARK_AT_MOST;

impl SqlAttempt {
    /// A try found the lock held, or others ahead: when `place`d, the entry was placed or
    /// refreshed, naming `sleeper`; the holder's lease, if known, ends `remaining` after `sent`.
    pub(super) fn waiting(
        &mut self,
        place: bool,
        sleeper: Option<u64>,
        sent: Instant,
        remaining: Option<Duration>,
    ) {
        if place {
            self.entry.refreshed(sent);
            self.named = sleeper;
        }
        self.lease_ends = remaining.map(|left| sent + left);
    }

    /// Whether a park that slept out may be followed by another without a try: the entry is
    /// not due for a refresh, the acquisition waits on, and the holder's lease, as last read,
    /// has not ended (a holder that renews is read again).
    pub(super) fn parks_on(&self, now: Instant) -> bool {
        self.entry.waits_on(now) && self.lease_ends.is_none_or(|at| now < at)
    }

    /// How long a parked acquisition waits: until a release rings it, for at most
    /// [`PARK_AT_MOST`], and no later than just after the holder's lease ends.
    pub(super) fn parked(&self) -> Busy {
        let busy = Busy::pushed().within(PARK_AT_MOST);
        let left = self
            .lease_ends
            .map(|at| at.saturating_duration_since(Instant::now()));
        within_lease(busy, left)
    }
}

/// `busy`, trying again just after the holder's lease ends at the latest.
pub(super) fn within_lease(busy: Busy, remaining: Option<Duration>) -> Busy {
    match remaining {
        Some(left) => busy.within(left + Duration::from_millis(1)),
        None => busy,
    }
}
