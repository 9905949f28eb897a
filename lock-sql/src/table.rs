//! The lock table's name: validated once, then quoted into every statement.

use std::fmt;

use lock_core::{Error, Result};

/// A validated SQL table name: an ASCII letter or `_`, then letters, digits or `_`, at most
/// [`TableName::MAX_LEN`] bytes.
///
/// Nothing else is accepted, so the name can be quoted into statements without escaping; it
/// also names the PostgreSQL notification channel and, with a `_waiters` suffix, the table of
/// waiting acquisitions beside the lock table.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TableName(String);

impl TableName {
    /// The longest accepted name: PostgreSQL's identifier limit.
    pub const MAX_LEN: usize = 63;

    /// The table used unless another is configured.
    pub const DEFAULT: &'static str = "distlock_locks";

    /// Validates `name`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) naming the rule broken.
    pub fn new(name: impl AsRef<str>) -> Result<Self> {
        let name = name.as_ref();
        let mut chars = name.chars();
        let starts_well = chars
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_');
        let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !starts_well || !rest_ok {
            return Err(Error::invalid_input(format!(
                "table name {name:?} is not a plain SQL identifier: use an ASCII letter or `_` \
                 followed by letters, digits or `_`"
            )));
        }
        if name.len() > Self::MAX_LEN {
            return Err(Error::invalid_input(format!(
                "table name {name:?} is {} bytes long; the limit is {}",
                name.len(),
                Self::MAX_LEN
            )));
        }
        Ok(Self(name.to_owned()))
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The table of waiting acquisitions that goes with this lock table: `{name}_waiters`
    /// (see [`companion`](Self::companion)).
    pub(crate) fn waiters(&self) -> String {
        self.companion("_waiters")
    }

    /// The table of semaphores and read-write locks that goes with this lock table:
    /// `{name}_claims` (see [`companion`](Self::companion)).
    pub(crate) fn claims(&self) -> String {
        self.companion("_claims")
    }

    /// `{name}{suffix}`, or for a name too long for that, its first bytes and a stable hash of
    /// the whole name, so that the result stays a distinct identifier within
    /// [`TableName::MAX_LEN`] bytes (PostgreSQL would silently cut a longer one down, possibly
    /// onto the lock table itself).
    fn companion(&self, suffix: &str) -> String {
        if self.0.len() + suffix.len() <= Self::MAX_LEN {
            return format!("{}{suffix}", self.0);
        }
        // 16 hex digits and an `_` between the kept bytes and the suffix.
        let keep = Self::MAX_LEN - suffix.len() - 17;
        // The name is ASCII, so any byte index is a character boundary.
        let head = self.0.get(..keep).unwrap_or(&self.0);
        format!("{head}_{:016x}{suffix}", fnv1a(self.0.as_bytes()))
    }
}

/// FNV-1a, 64 bits: a hash fixed by its definition, so every process and version derives the
/// same waiters table name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Default for TableName {
    fn default() -> Self {
        Self(Self::DEFAULT.to_owned())
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::ErrorKind;

    #[test]
    fn accepts_plain_identifiers() {
        for good in ["locks", "_x", "Distlock_Locks_2", &"a".repeat(63)] {
            assert_eq!(TableName::new(good).expect("valid").as_str(), good);
        }
    }

    #[test]
    fn waiters_tables_are_distinct_identifiers_within_the_limit() {
        let short = TableName::new("locks").expect("valid");
        assert_eq!(short.waiters(), "locks_waiters");
        assert_eq!(short.claims(), "locks_claims");
        let longest = "a".repeat(TableName::MAX_LEN);
        let (long, other) = (
            TableName::new(&longest).expect("valid"),
            TableName::new(format!("{}b", &longest[1..])).expect("valid"),
        );
        for table in [&long, &other] {
            let waiters = table.waiters();
            assert_eq!(waiters.len(), TableName::MAX_LEN, "{waiters}");
            assert!(TableName::new(&waiters).is_ok(), "{waiters}");
            assert_ne!(&waiters, table.as_str());
        }
        assert_ne!(long.waiters(), other.waiters());
        assert_ne!(long.claims(), long.waiters());
        assert_eq!(long.claims().len(), TableName::MAX_LEN);
        assert_eq!(long.waiters(), long.waiters());
        let fits = TableName::new("w".repeat(TableName::MAX_LEN - 8)).expect("valid");
        assert_eq!(fits.waiters(), format!("{}_waiters", fits.as_str()));
    }

    #[test]
    fn rejects_everything_that_would_need_escaping() {
        for bad in [
            "",
            "1locks",
            "locks; DROP TABLE users",
            "a-b",
            "a.b",
            "\"quoted\"",
            "`x`",
            "späti",
            &"a".repeat(64),
        ] {
            let error = TableName::new(bad).expect_err(bad);
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad:?}: {error}");
        }
    }
}
