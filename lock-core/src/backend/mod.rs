//! For backend authors: the acquisition engine and what a backend plugs into it.
//!
//! A backend supplies its store's primitive steps as a [`LockSteps`] implementation: begin an
//! attempt, try once, wait for its push source, abandon, clean up. It implements
//! [`HeldLock`] for a granted hold (release, renew). Its
//! [`DistributedLock::acquire_with`](crate::DistributedLock::acquire_with) is one call to
//! [`acquire`], which owns the rest once for every backend: option validation, the
//! overflow-safe [`Deadline`], the wait loop, backoff and jitter, the background cleanup of an
//! acquisition dropped or failed mid-flight, error context, the tracing span, and the lease
//! scheduler that watches every guard of a service ([`Leases`]: renewals one at a time per
//! hold, the clock drift margin, the at-risk and lost signals). Requests to the store are bounded
//! by [`timeout`], which keeps every limit in flight on one thread rather than a timer each.
//!
//! Configuration goes through the one URL grammar ([`crate::url`]) and [`ServiceOptions`],
//! the options every service shares. The in-memory backend ([`MemoryLock`](crate::MemoryLock))
//! is the worked example; the book's "Writing a backend" chapter walks through it.

mod claim_rule;
mod cleanup;
mod deadline;
mod engine;
mod gather;
mod grant;
mod held;
pub(crate) mod lease;
pub(crate) mod leases;
mod service;
mod steps;
mod timeout;
mod watch;

pub use claim_rule::{ClaimVerdict, claim_verdict};
pub use deadline::Deadline;
pub use engine::acquire;
pub use gather::{Gather, Sending};
pub use grant::Grant;
pub use held::HeldLock;
pub use leases::Leases;
pub use service::{Service, ServiceBuilder, ServiceOptions};
pub use steps::{Busy, LockSteps, Try};
pub use timeout::{Elapsed, timeout, timeout_keeper_stats};
