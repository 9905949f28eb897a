//! The cleanup guard around one acquisition: armed from the first request, so an acquisition
//! dropped or failed mid-flight never leaves a lock, queue entry or node behind.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::Backoff;
use crate::backend::LockSteps;

/// Owns an attempt; dropped while still armed, it cleans the attempt up in the background.
pub(crate) struct ArmedAttempt<S: LockSteps> {
    steps: Arc<S>,
    attempt: Option<S::Attempt>,
    window: Option<Duration>,
}

impl<S: LockSteps> ArmedAttempt<S> {
    pub(crate) fn new(steps: &Arc<S>, attempt: S::Attempt, window: Option<Duration>) -> Self {
        Self {
            steps: Arc::clone(steps),
            attempt: Some(attempt),
            window,
        }
    }

    /// The attempt, for the next step. Only `None` after [`disarm`](Self::disarm), which
    /// consumes the guard.
    pub(crate) fn attempt(&mut self) -> &mut S::Attempt {
        match self.attempt.as_mut() {
            Some(attempt) => attempt,
            None => unreachable!("an attempt is only taken by disarm, which consumes the guard"),
        }
    }

    /// The outcome is settled: nothing to clean up.
    pub(crate) fn disarm(mut self) {
        self.attempt = None;
    }
}

impl<S: LockSteps> Drop for ArmedAttempt<S> {
    fn drop(&mut self) {
        let Some(attempt) = self.attempt.take() else {
            return;
        };
        if !self.steps.needs_cleanup(&attempt) {
            return;
        }
        let steps = Arc::clone(&self.steps);
        let window = self.window;
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(clean_up(steps, attempt, window));
            }
            Err(_) => tracing::warn!(
                backend = steps.backend(),
                "acquisition dropped outside a tokio runtime; its lease or session will end what it left"
            ),
        }
    }
}

/// Runs `clean_up` until it succeeds, fails for good, or the window closes.
async fn clean_up<S: LockSteps>(steps: Arc<S>, mut attempt: S::Attempt, window: Option<Duration>) {
    let give_up = window.and_then(|window| Instant::now().checked_add(window));
    let backoff =
        Backoff::exponential(Duration::from_millis(20), Duration::from_secs(2)).unwrap_or_default();
    let mut failures = 0;
    loop {
        match steps.clean_up(&mut attempt).await {
            Ok(()) => return,
            Err(error)
                if error.is_temporary() && give_up.is_none_or(|end| Instant::now() < end) =>
            {
                tracing::debug!(%error, backend = steps.backend(), "cleanup after an interrupted acquire failed; retrying");
                tokio::time::sleep(backoff.delay(failures)).await;
                failures += 1;
            }
            Err(error) => {
                tracing::warn!(%error, backend = steps.backend(), "cleanup after an interrupted acquire failed; the lease will end what it left");
                return;
            }
        }
    }
}
