//! Jittered exponential backoff for backends that poll while they wait.

use std::time::Duration;

use crate::{Error, Result};

/// Jittered exponential backoff between acquire attempts: the n-th delay is drawn uniformly from
/// `[d/2, d]` where `d = min(initial * 2^n, max)` ("equal jitter"), so waiters that start together
/// spread out instead of retrying in lockstep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
}

impl Backoff {
    /// Backoff from `initial` doubling up to `max`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) if `initial` is zero or larger
    /// than `max`.
    pub fn exponential(initial: Duration, max: Duration) -> Result<Self> {
        if initial.is_zero() {
            return Err(Error::invalid_input(
                "backoff initial delay is zero: use at least 1 ms",
            ));
        }
        if initial > max {
            return Err(Error::invalid_input(format!(
                "backoff initial delay {initial:?} exceeds its maximum {max:?}"
            )));
        }
        Ok(Self { initial, max })
    }

    /// The first delay's upper bound.
    pub fn initial(&self) -> Duration {
        self.initial
    }

    /// The largest delay.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The delay before retry number `attempt` (0-based), jittered.
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(30));
        let ceiling = self.initial.saturating_mul(factor).min(self.max);
        let floor = ceiling / 2;
        let spread = (ceiling - floor).as_micros() as u64;
        floor + Duration::from_micros(rand::random_range(0..=spread))
    }
}

impl Default for Backoff {
    /// 10 ms doubling up to 500 ms.
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(500),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_jittered_and_stay_capped() {
        let backoff = Backoff::exponential(Duration::from_millis(8), Duration::from_millis(100));
        let backoff = backoff.expect("valid backoff");
        for attempt in 0..40 {
            let ceiling = (Duration::from_millis(8) * 2u32.pow(attempt.min(20)))
                .min(Duration::from_millis(100));
            let delay = backoff.delay(attempt);
            assert!(
                delay >= ceiling / 2 && delay <= ceiling,
                "attempt {attempt}: {delay:?}"
            );
        }
    }

    #[test]
    fn rejects_zero_and_inverted_bounds() {
        assert!(Backoff::exponential(Duration::ZERO, Duration::from_secs(1)).is_err());
        assert!(Backoff::exponential(Duration::from_secs(2), Duration::from_secs(1)).is_err());
    }
}
