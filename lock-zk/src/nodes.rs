//! Lock node names, Curator-compatible: `_c_<uuid>-lock-<sequence>`.

/// What Curator's InterProcessMutex puts before the sequence number.
pub(crate) const LOCK_MARKER: &str = "lock-";

/// A fresh protected-create prefix, `_c_<uuid>-`: unique to one acquisition, so after a
/// connection loss during create the node can be found again by it.
pub(crate) fn protected_prefix() -> String {
    let mut uuid = uuid::Uuid::encode_buffer();
    let uuid = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut uuid);
    let mut prefix = String::with_capacity(uuid.len() + 4);
    prefix.push_str("_c_");
    prefix.push_str(uuid);
    prefix.push('-');
    prefix
}

/// The fencing token of the lock node created by the transaction `czxid`: the creation zxid
/// itself. Grants follow sequence order and zxids only grow (across leader changes too), so
/// tokens rise with every grant. Every grant, `inspect` and `force_release` derive it here.
pub(crate) fn fencing_token(czxid: i64) -> u64 {
    // Zxids are positive; a negative one cannot occur and would fence nothing.
    u64::try_from(czxid).unwrap_or_default()
}

/// One lock node among a lock parent's children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Contender {
    pub(crate) node: String,
    pub(crate) sequence: i64,
    /// What the node's name carries before its sequence: `lock-`, `__READ__`, `__WRIT__`.
    pub(crate) marker: &'static str,
}

/// The mutex's lock nodes among `children`, lowest sequence (the holder) first. Children that
/// are not lock nodes (no `lock-<digits>` suffix) are ignored, as Curator ignores them.
pub(crate) fn contenders(children: Vec<String>) -> Vec<Contender> {
    contenders_of(children, &[LOCK_MARKER])
}

/// The nodes among `children` whose names end in one of `markers` and a sequence number,
/// lowest sequence first.
pub(crate) fn contenders_of(children: Vec<String>, markers: &[&'static str]) -> Vec<Contender> {
    let mut contenders: Vec<Contender> = children
        .into_iter()
        .filter_map(|node| {
            markers.iter().find_map(|marker| {
                let (_, digits) = node.rsplit_once(marker)?;
                let valid = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                let sequence = digits.parse().ok().filter(|_| valid)?;
                Some(Contender {
                    node: node.clone(),
                    sequence,
                    marker,
                })
            })
        })
        .collect();
    contenders.sort_by_key(|contender| contender.sequence);
    contenders
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_sequence_and_ignores_other_children() {
        let children = vec![
            "_c_b-lock-0000000003".to_owned(),
            "not-a-lock".to_owned(),
            "_c_a-lock-0000000001".to_owned(),
            "lock-0000000002".to_owned(),
            "_c_c-lock-12x".to_owned(),
        ];
        let order: Vec<i64> = contenders(children).iter().map(|c| c.sequence).collect();
        assert_eq!(order, [1, 2, 3]);
    }

    #[test]
    fn tokens_are_creation_zxids() {
        assert_eq!(fencing_token(0x1_0000_0002), 0x1_0000_0002);
        assert_eq!(fencing_token(-1), 0);
    }

    #[test]
    fn prefixes_are_unique_and_curator_shaped() {
        let (a, b) = (protected_prefix(), protected_prefix());
        assert_ne!(a, b);
        assert!(
            a.starts_with("_c_") && a.ends_with('-') && a.len() == 3 + 36 + 1,
            "{a}"
        );
    }
}
