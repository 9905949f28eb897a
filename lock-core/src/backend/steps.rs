//! The primitive steps a backend supplies; the engine runs everything around them.

use std::time::Duration;

use async_trait::async_trait;

use crate::backend::Leases;
use crate::backend::{Deadline, Grant};
use crate::{AcquireOptions, LockName, Result};

/// What one try found.
#[derive(Debug)]
pub enum Try {
    /// The lock is ours.
    Granted(Grant),
    /// The lock is held elsewhere (or the try was refused by contention): wait, then try again.
    Busy(Busy),
}

/// How to wait after a try that found the lock held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Busy {
    /// Try again no later than this: the holder's remaining lease, or when the waiter's place
    /// in a queue needs refreshing. `None`: no bound is known.
    pub recheck_within: Option<Duration>,
    /// Whether a push source (a watch, pub/sub, `LISTEN`) will wake the waiter when the lock
    /// may be free. Without one the engine also polls, with the options' jittered backoff.
    pub pushed: bool,
}

impl Busy {
    /// Held elsewhere; the backend will be woken by its push source.
    pub fn pushed() -> Self {
        Self {
            recheck_within: None,
            pushed: true,
        }
    }

    /// Held elsewhere, and nothing will say when it is free: poll with backoff.
    pub fn polled() -> Self {
        Self::default()
    }

    /// Try again at once (a watched node vanished, a subscription was just made).
    pub fn now() -> Self {
        Self {
            recheck_within: Some(Duration::ZERO),
            pushed: true,
        }
    }

    /// The same, but trying again no later than `within`.
    #[must_use]
    pub fn within(mut self, within: Duration) -> Self {
        self.recheck_within = Some(self.recheck_within.map_or(within, |old| old.min(within)));
        self
    }
}

/// A lock backend's primitive steps, run by [`acquire`](crate::backend::acquire).
///
/// The engine owns everything else: option validation, the overflow-safe deadline, the loop,
/// backoff and jitter, the cleanup of an acquisition dropped or failed mid-flight (in the
/// background, retried), error context and the tracing span. A backend's
/// [`DistributedLock::acquire_with`](crate::DistributedLock::acquire_with) is one call to
/// [`acquire`](crate::backend::acquire).
///
/// One acquisition runs [`begin`](LockSteps::begin) once, then alternates
/// [`try_once`](LockSteps::try_once) and [`wait`](LockSteps::wait) until a grant, an error, or
/// the deadline (then [`abandon`](LockSteps::abandon)). Whenever it ends other than by a grant
/// or a successful abandon (an error, a dropped future), the engine runs
/// [`clean_up`](LockSteps::clean_up) in the background until it succeeds.
#[async_trait]
pub trait LockSteps: Send + Sync + 'static {
    /// One acquisition's state: its owner token, queue place, node, waiter registration,
    /// connection of the request in flight.
    type Attempt: Send + 'static;

    /// The backend's short name, for errors and spans: `"redis"`, `"postgres"`, ...
    fn backend(&self) -> &'static str;

    /// The server this service talks to, password hidden, for error context.
    fn server(&self) -> &str;

    /// The service's lease scheduler, which watches every guard it grants (one per service,
    /// shared by its clones).
    fn leases(&self) -> &Leases;

    /// Starts one acquisition of `name`. No I/O.
    fn begin(&self, name: &LockName, options: &AcquireOptions) -> Self::Attempt;

    /// Tries once.
    ///
    /// # Cancel safety
    ///
    /// May be dropped at any await point: the engine then runs
    /// [`clean_up`](LockSteps::clean_up) on the attempt.
    ///
    /// # Errors
    ///
    /// The server could not be asked or refused; the engine then cleans up and returns it.
    async fn try_once(&self, attempt: &mut Self::Attempt) -> Result<Try>;

    /// Waits until the lock may be free (the push source fired) or `until` passes. The
    /// default, for backends without a push source, sleeps until `until`.
    ///
    /// # Cancel safety
    ///
    /// May be dropped; the attempt stays valid for a later try or cleanup.
    async fn wait(&self, attempt: &mut Self::Attempt, until: Deadline) {
        let _ = attempt;
        until.sleep().await;
    }

    /// The wait ended without a grant: undo what the attempt keeps on the server (leave the
    /// queue, delete the node). Nothing by default.
    ///
    /// # Cancel safety
    ///
    /// May be dropped; the engine then cleans up in the background.
    ///
    /// # Errors
    ///
    /// The server could not be asked; the engine then cleans up in the background.
    async fn abandon(&self, attempt: &mut Self::Attempt) -> Result<()> {
        let _ = attempt;
        Ok(())
    }

    /// Removes whatever an attempt interrupted at any point may have left on the server: a
    /// lock granted by a request whose answer was lost, a queue entry, a node. Must be
    /// idempotent and compare by owner. Runs in the background; retried while it fails with a
    /// [temporary](crate::Error::is_temporary) error, within
    /// [`cleanup_window`](LockSteps::cleanup_window).
    ///
    /// # Cancel safety
    ///
    /// Not applicable: the engine runs it to completion in a task of its own.
    ///
    /// # Errors
    ///
    /// The server could not be asked.
    async fn clean_up(&self, attempt: &mut Self::Attempt) -> Result<()>;

    /// Whether [`clean_up`](LockSteps::clean_up) has anything to do for `attempt` (saves a
    /// background task when nothing can be left behind). `true` by default.
    fn needs_cleanup(&self, attempt: &Self::Attempt) -> bool {
        let _ = attempt;
        true
    }

    /// How long cleanup retries may go on: past it, whatever is left has expired by itself.
    /// The lease by default; `None` for backends whose leftovers end another way (a ZooKeeper
    /// session, whose end `clean_up` reports as success).
    fn cleanup_window(&self, options: &AcquireOptions) -> Option<Duration> {
        Some(options.lease)
    }
}
