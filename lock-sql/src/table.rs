//! The lock table's name: validated once, then quoted into every statement.

use std::fmt;

use lock_core::{Error, Result};

/// A validated SQL table name: an ASCII letter or `_`, then letters, digits or `_`, at most
/// [`TableName::MAX_LEN`] bytes.
///
/// Nothing else is accepted, so the name can be quoted into statements without escaping; it
/// also names the PostgreSQL notification channel.
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
