//! Leader election on the lock service: one leader per election name at a time, its epoch a
//! fencing token, its published value readable and observable by followers (the design is
//! ADR 0008, `docs/adr/0008-leader-election.md`).
//!
//! A backend offers it with three methods of [`DistributedLock`](crate::DistributedLock):
//! [`campaign_with`](crate::DistributedLock::campaign_with) (an exclusive hold on the name's
//! election object, the published value as its owner label),
//! [`read_leader`](crate::DistributedLock::read_leader) and
//! [`watch_leader`](crate::DistributedLock::watch_leader); everything else is written here once.

mod ext;
mod leader;
mod leadership;
mod observe;

pub use ext::ElectionExt;
pub use leader::{Leader, LeaderChange, Missed};
pub use leadership::Leadership;
pub use observe::{DEFAULT_OBSERVER_POLL, LeaderObserver};

/// What [`watch_leader`](crate::DistributedLock::watch_leader) returns: a tick whenever the
/// election's leader may have changed.
pub type LeaderTicks = futures_util::stream::BoxStream<'static, ()>;
