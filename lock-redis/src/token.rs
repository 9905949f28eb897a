//! Owner tokens.

/// A fresh random 128-bit owner token, as 32 hex digits.
pub(crate) fn new_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}
