//! The owner label in a lock node's data.
//!
//! Our lock nodes carry the holder's owner label as their data, UTF-8 bytes as they are, set by
//! the create itself (no extra request). Curator's InterProcessMutex writes data of its own in
//! the same place (the client's IP address, by default) and ignores ours; a node's data is
//! therefore shown as its label whenever it reads as one, whoever made the node.

use lock_core::MAX_OWNER_LABEL;

/// The label shown for a lock node whose data is no readable label: empty, binary, or control
/// characters (a Curator client configured with data of its own).
pub(crate) const FOREIGN_LABEL: &str = "curator";

/// The data of a lock node made for a holder labelled `label`.
pub(crate) fn node_data(label: &str) -> &[u8] {
    label.as_bytes()
}

/// The owner label a lock node's `data` shows: the data itself when it is printable UTF-8
/// (cut to [`MAX_OWNER_LABEL`] bytes at a character boundary, for foreign data that is longer),
/// [`FOREIGN_LABEL`] otherwise.
pub(crate) fn owner_label(data: &[u8]) -> String {
    let Ok(text) = std::str::from_utf8(data) else {
        return FOREIGN_LABEL.to_owned();
    };
    if text.is_empty() || text.chars().any(char::is_control) {
        return FOREIGN_LABEL.to_owned();
    }
    let mut end = text.len().min(MAX_OWNER_LABEL);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_labels_read_back_as_written() {
        for label in [
            "host-7:4242",
            "ロック:1",
            "a b",
            &"x".repeat(MAX_OWNER_LABEL),
        ] {
            assert_eq!(owner_label(node_data(label)), label);
        }
    }

    #[test]
    fn curator_addresses_show_and_unreadable_data_is_foreign() {
        assert_eq!(owner_label(b"10.0.0.5"), "10.0.0.5");
        assert_eq!(owner_label(b""), FOREIGN_LABEL);
        assert_eq!(owner_label(&[0xff, 0x00, 0x17]), FOREIGN_LABEL);
        assert_eq!(owner_label(b"line\nbreak"), FOREIGN_LABEL);
    }

    #[test]
    fn long_foreign_data_is_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_OWNER_LABEL);
        let shown = owner_label(long.as_bytes());
        assert!(shown.len() <= MAX_OWNER_LABEL && !shown.is_empty());
        assert!(long.starts_with(&shown));
    }
}
