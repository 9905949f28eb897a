//! Validated lock names.

use std::fmt;
use std::sync::Arc;

use crate::{Error, Result};

/// A validated lock name: non-empty, at most [`LockName::MAX_LEN`] bytes of UTF-8, no control
/// characters.
///
/// Any valid name works on every backend: each backend maps it to a safe key, path or row value
/// of its own, so one name always means one lock. Cloning is cheap.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockName(Arc<str>);

impl LockName {
    /// The longest accepted name, in bytes.
    pub const MAX_LEN: usize = 255;

    /// Validates `name`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) if the name is empty, longer
    /// than [`LockName::MAX_LEN`] bytes, or contains a control character.
    pub fn new(name: impl AsRef<str>) -> Result<Self> {
        let name = name.as_ref();
        if name.is_empty() {
            return Err(Error::invalid_input(
                "lock name is empty: give every lock a non-empty name",
            ));
        }
        if name.len() > Self::MAX_LEN {
            return Err(Error::invalid_input(format!(
                "lock name is {} bytes long; the limit is {} bytes (hash long names before using them)",
                name.len(),
                Self::MAX_LEN
            )));
        }
        if let Some(position) = name.chars().position(char::is_control) {
            return Err(Error::invalid_input(format!(
                "lock name {name:?} has a control character at character {position}; \
                 use printable characters only"
            )));
        }
        Ok(Self(Arc::from(name)))
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl AsRef<str> for LockName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for LockName {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Self::new(name)
    }
}

/// Anything the convenience methods accept as a lock name: `&str`, `String`, or a [`LockName`].
pub trait IntoLockName {
    /// Validates (if needed) and converts.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for an invalid name.
    fn into_lock_name(self) -> Result<LockName>;
}

impl IntoLockName for LockName {
    fn into_lock_name(self) -> Result<LockName> {
        Ok(self)
    }
}

impl IntoLockName for &LockName {
    fn into_lock_name(self) -> Result<LockName> {
        Ok(self.clone())
    }
}

impl IntoLockName for &str {
    fn into_lock_name(self) -> Result<LockName> {
        LockName::new(self)
    }
}

impl IntoLockName for String {
    fn into_lock_name(self) -> Result<LockName> {
        LockName::new(self)
    }
}

impl IntoLockName for &String {
    fn into_lock_name(self) -> Result<LockName> {
        LockName::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn accepts_unicode_slashes_spaces_and_the_maximum_length() {
        for name in [
            "a",
            "jobs/nightly report",
            "ロック/🔒",
            &"x".repeat(LockName::MAX_LEN),
        ] {
            assert_eq!(
                LockName::new(name).map(|n| n.to_string()).ok().as_deref(),
                Some(name)
            );
        }
    }

    #[test]
    fn rejects_empty_long_and_control_characters_with_a_reason() {
        let cases = [
            ("", "empty"),
            (&*"x".repeat(256), "limit is 255"),
            ("a\nb", "control character"),
        ];
        for (name, expected) in cases {
            let error = LockName::new(name).err().map(|e| (e.kind(), e.to_string()));
            let (kind, message) = error.unwrap_or_else(|| panic!("{name:?} was accepted"));
            assert_eq!(kind, ErrorKind::InvalidInput);
            assert!(message.contains(expected), "{message}");
        }
    }
}
