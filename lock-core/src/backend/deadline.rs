//! Deadlines that cannot overflow: a wait of `Duration::MAX` (or anything past the clock's
//! range) is no deadline at all.

use std::time::Duration;

use tokio::time::Instant;

/// When a wait ends; `None` inside means never.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// The deadline `wait` from now; `None` or a `wait` too long to represent means never.
    pub fn after(wait: Option<Duration>) -> Self {
        Self(wait.and_then(|wait| Instant::now().checked_add(wait)))
    }

    /// No deadline.
    pub const NEVER: Self = Self(None);

    /// The instant, if there is one.
    pub fn instant(self) -> Option<Instant> {
        self.0
    }

    /// Whether the deadline has passed at `now`.
    pub fn passed(self, now: Instant) -> bool {
        self.0.is_some_and(|deadline| now >= deadline)
    }

    /// The earlier of this deadline and `delay` after `now` (a `delay` past the clock's range
    /// changes nothing).
    #[must_use]
    pub fn at_most(self, now: Instant, delay: Duration) -> Self {
        match now.checked_add(delay) {
            Some(at) => Self(Some(self.0.map_or(at, |deadline| deadline.min(at)))),
            None => self,
        }
    }

    /// Sleeps until the deadline; never returns when there is none.
    pub async fn sleep(self) {
        match self.0 {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_waits_are_no_deadline_and_bounds_only_shorten() {
        assert_eq!(Deadline::after(Some(Duration::MAX)), Deadline::NEVER);
        assert_eq!(Deadline::after(None), Deadline::NEVER);
        let now = Instant::now();
        let bounded = Deadline::NEVER.at_most(now, Duration::from_secs(1));
        assert_eq!(bounded.instant(), Some(now + Duration::from_secs(1)));
        let tighter = bounded.at_most(now, Duration::from_millis(10));
        assert_eq!(tighter.instant(), Some(now + Duration::from_millis(10)));
        assert_eq!(tighter.at_most(now, Duration::MAX), tighter);
        assert!(tighter.passed(now + Duration::from_millis(10)));
        assert!(!Deadline::NEVER.passed(now));
    }
}
