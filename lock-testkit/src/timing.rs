//! Timing tolerances that stretch on slow machines.

use std::time::Duration;

/// The multiplier from `LOCK_TEST_TIMING` (default 1.0): every wait and tolerance in timing
/// tests is scaled by it, so a slow CI machine stretches waits instead of flaking.
pub fn timing() -> f64 {
    std::env::var("LOCK_TEST_TIMING")
        .ok()
        .and_then(|value| value.parse::<f64>().ok())
        .filter(|factor| factor.is_finite() && *factor > 0.0)
        .unwrap_or(1.0)
}

/// `duration` scaled by [`timing`].
pub fn scaled(duration: Duration) -> Duration {
    duration.mul_f64(timing())
}

/// `ms` milliseconds scaled by [`timing`].
pub fn scaled_ms(ms: u64) -> Duration {
    scaled(Duration::from_millis(ms))
}
