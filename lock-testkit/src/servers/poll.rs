//! Bounded waits for a topology to settle, failing with the last reason it had not.

use std::time::{Duration, Instant};

/// How often a settling topology is checked.
const INTERVAL: Duration = Duration::from_millis(50);

/// Calls `check` every 50 ms until it answers `Ok`, for at most `limit`; then fails with the
/// last `Err` it gave. `check` runs at least once, however short `limit` is.
pub(crate) fn poll_until<E>(
    limit: Duration,
    mut check: impl FnMut() -> Result<(), E>,
) -> Result<(), E> {
    let deadline = Instant::now() + limit;
    loop {
        let error = match check() {
            Ok(()) => return Ok(()),
            Err(error) => error,
        };
        if Instant::now() >= deadline {
            return Err(error);
        }
        std::thread::sleep(INTERVAL);
    }
}
