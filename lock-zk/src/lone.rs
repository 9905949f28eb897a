//! Knowing that our lock node is alone in its queue without listing the queue.
//!
//! ZooKeeper numbers the ensemble's transactions one after another (the zxid; a new leader
//! starts a new epoch, a jump). A mutex hold whose node was alone in its queue (no other
//! contender when it was granted) and whose release deleted it leaves a note: the node's
//! creation zxid `z`. The service's next acquisition of that lock takes the note before it
//! sends its create, and sends the create without a listing. When the create's zxid is
//! `z + 2`, the ensemble ran exactly one transaction in between, and that was our delete
//! (answered before the create was sent, so between the two): nothing else was created,
//! deleted or changed anywhere, so our new node is alone and holds. Any other transaction
//! (another client's node, a session's start or end, the parent reaped and made again,
//! another of this service's locks, a new epoch) breaks the count, and the acquisition lists
//! the queue, one round trip later than a create sent with its listing.
//!
//! Uncontended, a pair is then a create and a delete, the two writes the recipe needs. Taking
//! the note means that of two acquisitions racing after a hold, one at most skips the listing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How many locks' notes a service keeps; past that it forgets them all (each lock's next
/// acquisition then lists its queue once).
const MOST_NOTES: usize = 1024;

/// A service's notes, by lock parent: the creation zxid of the last node there that was
/// alone and that we deleted.
#[derive(Debug, Default)]
pub(crate) struct LoneNotes {
    notes: Mutex<HashMap<Box<str>, i64>>,
}

impl LoneNotes {
    /// Takes the note for `parent`: a create sent after this call may check against it.
    pub(crate) fn take(&self, parent: &str) -> Option<i64> {
        self.notes().remove(parent)
    }

    fn leave(&self, parent: &str, czxid: i64) {
        let mut notes = self.notes();
        if notes.len() >= MOST_NOTES {
            notes.clear();
        }
        notes.insert(parent.into(), czxid);
    }

    fn notes(&self) -> MutexGuard<'_, HashMap<Box<str>, i64>> {
        self.notes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether a node created at `czxid`, sent after the note `noted` was taken, is alone.
pub(crate) fn proves_alone(noted: i64, czxid: i64) -> bool {
    noted.checked_add(2) == Some(czxid)
}

/// A hold whose node was alone when granted: where its release leaves its note, and the
/// node's creation zxid. Kept with every such hold, so it carries no copy of the lock's
/// parent: the node's path gives it.
#[derive(Debug)]
pub(crate) struct LoneHold {
    pub(crate) notes: Arc<LoneNotes>,
    pub(crate) czxid: i64,
}

impl LoneHold {
    /// Our delete of the node at `path` was answered: the next create under its parent may
    /// check against its zxid.
    pub(crate) fn deleted(&self, path: &str) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.notes.leave(parent, self.czxid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_very_next_transaction_but_one_proves_a_node_alone() {
        assert!(proves_alone(41, 43));
        assert!(!proves_alone(41, 42), "the delete itself");
        assert!(!proves_alone(41, 44), "another transaction ran in between");
        assert!(!proves_alone(41, (1 << 32) | 43), "a new epoch");
        assert!(!proves_alone(i64::MAX, i64::MIN + 1), "no wrapping");
    }

    #[test]
    fn a_note_is_taken_once_and_a_full_book_starts_over() {
        let notes = LoneNotes::default();
        notes.leave("/a", 7);
        assert_eq!(notes.take("/a"), Some(7));
        assert_eq!(notes.take("/a"), None);
        for index in 0..MOST_NOTES {
            notes.leave(&format!("/{index}"), 1);
        }
        notes.leave("/last", 9);
        assert_eq!(notes.take("/0"), None);
        assert_eq!(notes.take("/last"), Some(9));
    }
}
