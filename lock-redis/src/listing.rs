//! Finding held locks by name prefix: a `SCAN MATCH` pattern that only lock keys fit, and lock
//! keys back to names.

use lock_core::LockName;

use crate::keys::{escape, unescape};

/// The `SCAN MATCH` pattern for the lock keys (`{PREFIX:NAME}`) under key prefix `prefix`
/// whose names start with `name_prefix`. Glob characters in either match only themselves; a
/// lock key is the only key of a lock that ends with the tag's `}`.
pub(crate) fn lock_key_pattern(prefix: &str, name_prefix: &str) -> String {
    format!(
        "{{{}:{}*}}",
        glob_escape(prefix),
        glob_escape(&escape(name_prefix))
    )
}

/// Escapes the characters Redis's glob gives a meaning (`*`, `?`, `[`, `]`, `\`).
fn glob_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The name whose lock key under `prefix` is `key`; `None` for any other key (another lock's
/// `:fence` or `:queue`, a key the pattern matched by accident, one not of our making).
pub(crate) fn lock_name_of(prefix: &str, key: &[u8]) -> Option<LockName> {
    let key = std::str::from_utf8(key).ok()?;
    let inner = key.strip_prefix('{')?.strip_suffix('}')?;
    let escaped = inner.strip_prefix(prefix)?.strip_prefix(':')?;
    LockName::new(unescape(escaped)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::LockKeys;

    #[test]
    fn glob_characters_and_braces_in_a_prefix_match_only_themselves() {
        assert_eq!(lock_key_pattern("distlock", "jobs/"), "{distlock:jobs/*}");
        assert_eq!(
            lock_key_pattern("a*b", r"x?[y]\{%"),
            r"{a\*b:x\?\[y\]\\%7B%25*}"
        );
    }

    #[test]
    fn only_lock_keys_map_back_to_their_names() {
        for name in ["jobs/nightly", "a}b", "{x}", "50%", "*?[]\\"] {
            let keys = LockKeys::new("p", &LockName::new(name).expect("valid name"));
            let back = lock_name_of("p", keys.lock().as_bytes());
            assert_eq!(back.as_ref().map(LockName::as_str), Some(name));
            for other in &crate::keys::tests::all_of(&keys)[1..] {
                assert_eq!(lock_name_of("p", other.as_bytes()), None, "{other}");
            }
            assert_eq!(lock_name_of("q", keys.lock().as_bytes()), None);
        }
        for foreign in ["{p:a}:x}", "{p:a%}", "p:a", "{pa}", "{p:a{b}"] {
            assert_eq!(lock_name_of("p", foreign.as_bytes()), None, "{foreign}");
        }
    }
}
