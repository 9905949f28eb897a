//! `inspect`: who holds a lock (owner label, fencing token, when its node was made) and how
//! many acquisitions queue behind it.

use std::time::{Duration, SystemTime};

use lock_core::backend::Deadline;
use lock_core::{HolderInfo, LockName, LockStatus, Result};

use crate::label::owner_label;
use crate::nodes::fencing_token;
use crate::queue::{self, HolderNode};
use crate::steps::ZkSteps;

impl ZkSteps {
    /// `name`'s status: the lowest lock node is the holder, every other lock node a waiter.
    pub(crate) async fn status(&self, name: &LockName) -> Result<LockStatus> {
        let session = self.sessions.session(Deadline::NEVER).await?;
        let queue = queue::read(&session, &self.parent(name), "inspect").await?;
        let holders = queue.holder.as_ref().map(holder_info).into_iter().collect();
        Ok(LockStatus::new(holders, queue.waiters))
    }
}

/// The holder as an operator sees it. No lease is left to show: the holder's session, not a
/// lease, keeps the node. The grant time is the node's creation time, which is when the holder
/// joined the queue.
fn holder_info(node: &HolderNode) -> HolderInfo {
    let info = HolderInfo::new(owner_label(&node.data), fencing_token(node.stat.czxid));
    match created_at(node.stat.ctime) {
        Some(at) => info.granted_at(at),
        None => info,
    }
}

/// A node's `ctime` (milliseconds since the epoch, by the server's clock) as a time; `None`
/// for a time before the epoch, which no live server reports.
fn created_at(ctime: i64) -> Option<SystemTime> {
    let millis = u64::try_from(ctime).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_times_are_milliseconds_since_the_epoch() {
        let at = created_at(1_700_000_000_123);
        let expected = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(at, Some(expected));
        assert_eq!(created_at(-5), None);
    }
}
