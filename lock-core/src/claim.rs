//! What a shared acquisition asks for: a semaphore permit, or a read or write hold.

use std::fmt;

use crate::{Error, Result};

/// A hold on a name that others may share, beyond the mutex: one permit of a counting
/// semaphore, or one side of a read-write lock.
///
/// A name is one kind of object: the permits of semaphore `api/vendor`, the read-write lock
/// `cache/rebuild` and the mutex `jobs/nightly` live apart; do not use one name as two kinds.
/// Every grant of a semaphore or read-write lock takes the next value of that object's one
/// fencing counter (permits, reads and writes alike), so a write hold's token is larger than
/// every token granted before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Claim {
    /// One of `max_permits` permits: at most that many holders at once. Every holder of a name
    /// must name the same limit (as with Curator's lease count): an acquisition that names
    /// another while holders exist fails with
    /// [`InvalidInput`](crate::ErrorKind::InvalidInput).
    Permit {
        /// How many holders the semaphore admits at once; at least 1.
        max_permits: u32,
    },
    /// A read hold: shared with other readers, never with a writer. A writer that waits blocks
    /// readers that arrive after it, so writers are not starved.
    Read,
    /// A write hold: shared with nobody.
    Write,
}

impl Claim {
    /// The largest semaphore limit accepted.
    pub const MAX_PERMITS: u32 = 1_000_000;

    /// A permit of a semaphore admitting `max_permits` holders.
    pub const fn permit(max_permits: u32) -> Self {
        Self::Permit { max_permits }
    }

    /// Checks the claim before any I/O.
    ///
    /// # Errors
    ///
    /// [`InvalidInput`](crate::ErrorKind::InvalidInput) for a semaphore limit of zero or above
    /// [`MAX_PERMITS`](Self::MAX_PERMITS).
    pub fn validate(&self) -> Result<()> {
        match *self {
            Self::Permit { max_permits: 0 } => Err(Error::invalid_input(
                "a semaphore of 0 permits admits nobody: give max_permits of at least 1",
            )),
            Self::Permit { max_permits } if max_permits > Self::MAX_PERMITS => {
                Err(Error::invalid_input(format!(
                    "max_permits {max_permits} is above the limit {}",
                    Self::MAX_PERMITS
                )))
            }
            _ => Ok(()),
        }
    }

    /// The short name of the claim's kind, for errors and spans: `permit`, `read`, `write`.
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Permit { .. } => "permit",
            Self::Read => "read",
            Self::Write => "write",
        }
    }

    /// Whether a hold of `self` already covers a nested request for `inner` on the same name in
    /// the same task: a permit covers a permit, a write hold covers reads and writes, a read
    /// hold covers reads.
    pub(crate) fn covers(&self, inner: &Claim) -> bool {
        matches!(
            (self, inner),
            (Self::Permit { .. }, Self::Permit { .. })
                | (Self::Write, Self::Read | Self::Write)
                | (Self::Read, Self::Read)
        )
    }

    /// The error for a semaphore acquisition whose limit differs from its holders'.
    pub fn mismatched_permits(asked: u32, held: u32) -> Error {
        Error::invalid_input(format!(
            "semaphore asked with max_permits {asked}, but its holders use {held}: every \
             holder of a name must name the same limit"
        ))
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Permit { max_permits } => write!(f, "permit of {max_permits}"),
            other => f.write_str(other.kind()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn limits_out_of_range_are_invalid_input() {
        for max in [0, Claim::MAX_PERMITS + 1, u32::MAX] {
            let error = Claim::permit(max).validate().expect_err("out of range");
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        }
        for claim in [
            Claim::permit(1),
            Claim::permit(Claim::MAX_PERMITS),
            Claim::Read,
        ] {
            claim.validate().expect("in range");
        }
    }

    #[test]
    fn write_covers_read_but_read_never_covers_write() {
        assert!(Claim::Write.covers(&Claim::Read));
        assert!(Claim::Write.covers(&Claim::Write));
        assert!(Claim::Read.covers(&Claim::Read));
        assert!(!Claim::Read.covers(&Claim::Write));
        assert!(!Claim::permit(2).covers(&Claim::Read));
        assert!(Claim::permit(2).covers(&Claim::permit(2)));
    }
}
