//! Lock names to znode names: reversible, collision-free escaping.
//!
//! A lock name becomes ONE path component below the root, so `jobs/nightly` is the node
//! `<root>/jobs%2Fnightly`, never a nested path. `%` and everything ZooKeeper rejects or treats
//! specially in a component (`/`, control and non-characters, the components `.` and `..`) are
//! percent-encoded byte by byte; `zookeeper` (reserved at `/`) becomes `%7Aookeeper`. Every other
//! character stays as it is, so plain names read the same in ZooKeeper (and to Curator).

use lock_core::LockName;

/// The node name for `name`. Injective: distinct lock names give distinct node names.
pub(crate) fn node_name(name: &LockName) -> String {
    let mut out = String::with_capacity(name.as_str().len() + 8);
    push_node_name(&mut out, name);
    out
}

/// Appends [`node_name`]`(name)` to `out`: a path is built in one buffer.
pub(crate) fn push_node_name(out: &mut String, name: &LockName) {
    let name = name.as_str();
    match name {
        "." => return out.push_str("%2E"),
        ".." => return out.push_str("%2E%2E"),
        "zookeeper" => return out.push_str("%7Aookeeper"),
        _ => {}
    }
    // Runs of characters that stay as they are are copied whole; printable ASCII other than
    // `%` and `/` (nearly every name) is judged by its byte, without decoding.
    let mut kept_from = 0;
    let mut at = 0;
    while let Some(&byte) = name.as_bytes().get(at) {
        let c = match byte {
            b'%' | b'/' => char::from(byte),
            b' '..=b'~' => {
                at += 1;
                continue;
            }
            _ => match name.get(at..).and_then(|rest| rest.chars().next()) {
                Some(c) if needs_escape(c) => c,
                Some(c) => {
                    at += c.len_utf8();
                    continue;
                }
                None => break,
            },
        };
        out.push_str(name.get(kept_from..at).unwrap_or_default());
        push_escaped(out, c);
        at += c.len_utf8();
        kept_from = at;
    }
    out.push_str(name.get(kept_from..).unwrap_or_default());
}

/// Appends `c` percent-encoded, byte by byte, in upper-case hex.
fn push_escaped(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut buffer = [0u8; 4];
    for byte in c.encode_utf8(&mut buffer).bytes() {
        out.push('%');
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xF)]));
    }
}

/// The lock name whose node name is `node`; `None` for a node no lock name maps to (a
/// malformed or non-canonical escape, such as lower-case hex: something else made it).
pub(crate) fn lock_name(node: &str) -> Option<LockName> {
    let decoded = lock_core::url::percent_decode(node)?;
    let name = LockName::new(decoded).ok()?;
    (node_name(&name) == node).then_some(name)
}

/// Characters ZooKeeper's path validation rejects, plus `/` and our escape character. ZooKeeper
/// checks UTF-16 units, so characters beyond U+FFFF (emoji), whose surrogates fall in its
/// rejected U+D800..U+F8FF range, are escaped too.
fn needs_escape(c: char) -> bool {
    matches!(c, '%' | '/')
        || c.is_control()
        || matches!(c, '\u{7F}'..='\u{9F}' | '\u{E000}'..='\u{F8FF}' | '\u{FFF0}'..)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::url::percent_decode;

    fn node(name: &str) -> String {
        node_name(&LockName::new(name).expect("valid name"))
    }

    #[test]
    fn plain_names_stay_readable() {
        assert_eq!(node("orders-42"), "orders-42");
        assert_eq!(node("ロック"), "ロック");
        assert_eq!(node("{tag}"), "{tag}");
    }

    #[test]
    fn slashes_dots_percent_and_reserved_names_are_escaped() {
        assert_eq!(node("a/b"), "a%2Fb");
        assert_eq!(node("a%2Fb"), "a%252Fb");
        assert_eq!(node("."), "%2E");
        assert_eq!(node(".."), "%2E%2E");
        assert_eq!(node("..."), "...");
        assert_eq!(node("zookeeper"), "%7Aookeeper");
        assert_eq!(node("\u{E000}"), "%EE%80%80");
        assert_eq!(node("🔒"), "%F0%9F%94%92");
        assert_eq!(node("a b/ü\u{E000}é%"), "a b%2Fü%EE%80%80é%25");
        assert_eq!(node("x/"), "x%2F");
    }

    #[test]
    fn escaping_is_reversible_and_collision_free() {
        let names = [
            "a/b",
            "a%2Fb",
            "a_b",
            "a b",
            "A B",
            ".",
            "..",
            "%2E",
            "zookeeper",
            "%7Aookeeper",
            "x\u{FFF0}",
            "/",
            "//",
            "%",
            "%%",
        ];
        let mut seen = std::collections::HashSet::new();
        for name in names {
            let encoded = node(name);
            assert!(!encoded.contains('/') && encoded != "." && encoded != "..");
            assert_eq!(percent_decode(&encoded).as_deref(), Some(name), "{encoded}");
            let decoded = lock_name(&encoded).map(|name| name.as_str().to_owned());
            assert_eq!(decoded.as_deref(), Some(name), "{encoded}");
            assert!(
                seen.insert(encoded.clone()),
                "{name:?} collides as {encoded:?}"
            );
        }
    }

    #[test]
    fn foreign_nodes_are_no_lock_names() {
        for node in ["a%2fb", "%zz", "%", "zookeeper", ".", "%FF", "%0A"] {
            assert_eq!(lock_name(node), None, "{node}");
        }
    }
}
