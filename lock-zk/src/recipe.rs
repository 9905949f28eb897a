//! Which queue an acquisition joins and when its node holds: the mutex (Curator's
//! `InterProcessMutex`), the two sides of the read-write lock (Curator's
//! `InterProcessReadWriteLock`), which share one parent and one sequence, and the election
//! (Curator's `LeaderLatch`).

use crate::nodes::{Contender, LOCK_MARKER};

/// What Curator's read lock puts before the sequence number.
pub(crate) const READ_MARKER: &str = "__READ__";
/// What Curator's write lock puts before the sequence number.
pub(crate) const WRITE_MARKER: &str = "__WRIT__";

/// What Curator's leader latch puts before the sequence number.
pub(crate) const LATCH_MARKER: &str = "latch-";

/// The node child an election's latch nodes live under, below the name's lock parent. Its
/// name sorts after `lock-`: Curator's mutex counts every child of its path in sorted order,
/// so a child sorting first would block it.
pub(crate) const ELECTION_CHILD: &str = "voting";

/// The node child a read-write lock's nodes live under, below the name's lock parent, so
/// they never mix with the mutex's nodes.
pub(crate) const RW_CHILD: &str = "rw";

/// The node child a semaphore's `locks/` and `leases/` live under, below the name's lock
/// parent (see [`semaphore`](crate::semaphore)).
pub(crate) const SEMAPHORE_CHILD: &str = "semaphore";

/// One of the queue recipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recipe {
    Mutex,
    Read,
    Write,
    Latch,
}

impl Recipe {
    /// What our node's name carries before its sequence number.
    pub(crate) fn marker(self) -> &'static str {
        match self {
            Self::Mutex => LOCK_MARKER,
            Self::Read => READ_MARKER,
            Self::Write => WRITE_MARKER,
            Self::Latch => LATCH_MARKER,
        }
    }

    /// The markers of the nodes that share our queue.
    pub(crate) fn queue(self) -> &'static [&'static str] {
        match self {
            Self::Mutex => &[LOCK_MARKER],
            Self::Read | Self::Write => &[READ_MARKER, WRITE_MARKER],
            Self::Latch => &[LATCH_MARKER],
        }
    }

    /// The node our node at `index` of `contenders` (sorted by sequence) waits for; `None`
    /// when ours holds. A mutex or write node waits for the node just before it; a read node
    /// waits for the first write node, if one comes before it (as Curator's read lock does):
    /// readers share, and a waiting writer holds back the readers that queue after it.
    pub(crate) fn blocker(self, contenders: &[Contender], index: usize) -> Option<usize> {
        match self {
            Self::Mutex | Self::Write | Self::Latch => index.checked_sub(1),
            Self::Read => contenders
                .iter()
                .take(index)
                .position(|contender| contender.marker == WRITE_MARKER),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::contenders_of;

    fn queue(names: &[&str]) -> Vec<Contender> {
        let children = names.iter().map(|name| (*name).to_owned()).collect();
        contenders_of(children, Recipe::Read.queue())
    }

    #[test]
    fn readers_wait_only_for_the_first_writer_before_them() {
        let nodes = queue(&[
            "_c_a-__READ__0000000001",
            "_c_b-__READ__0000000002",
            "_c_c-__WRIT__0000000003",
            "_c_d-__READ__0000000004",
        ]);
        assert_eq!(Recipe::Read.blocker(&nodes, 1), None);
        assert_eq!(Recipe::Read.blocker(&nodes, 3), Some(2));
        assert_eq!(Recipe::Write.blocker(&nodes, 2), Some(1));
        assert_eq!(Recipe::Write.blocker(&nodes, 0), None);
    }

    #[test]
    fn the_mutex_queue_ignores_read_write_nodes_and_the_reverse() {
        let children = vec![
            "_c_a-lock-0000000001".to_owned(),
            "_c_b-__WRIT__0000000002".to_owned(),
        ];
        assert_eq!(
            contenders_of(children.clone(), Recipe::Mutex.queue()).len(),
            1
        );
        assert_eq!(contenders_of(children, Recipe::Write.queue()).len(), 1);
    }
}
