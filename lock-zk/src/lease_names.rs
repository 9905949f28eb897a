//! Semaphore lease node names: Curator's `_c_<uuid>-lease-<sequence>`, with our permit limit
//! between the prefix and `lease-` (`_c_<uuid>-permits-5-lease-<sequence>`). Curator counts a
//! semaphore's lease nodes whatever their names; the limit in ours lets every distlock
//! acquirer check that it asks with the limit the holders use. Curator's own lease nodes carry
//! no limit, and Curator checks none: each Curator client counts against its own.

/// What our lease nodes carry before their sequence number, for a limit of `max_permits`.
pub(crate) fn lease_marker(max_permits: u32) -> String {
    format!("permits-{max_permits}-lease-")
}

/// The limit a lease node's name carries; `None` for nodes without one (Curator's).
pub(crate) fn limit_of(node: &str) -> Option<u32> {
    let (_, rest) = node.rsplit_once("-permits-")?;
    let (limit, sequence) = rest.split_once("-lease-")?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if !digits(sequence) || !digits(limit) {
        return None;
    }
    limit.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_lease_names_carry_their_limit_and_curators_none() {
        let ours = format!("_c_{}-{}0000000007", uuid::Uuid::new_v4(), lease_marker(5));
        assert!(ours.ends_with("-permits-5-lease-0000000007"), "{ours}");
        assert_eq!(limit_of(&ours), Some(5));
        let curators = format!("_c_{}-lease-0000000008", uuid::Uuid::new_v4());
        assert_eq!(limit_of(&curators), None);
        assert_eq!(limit_of("_c_x-permits-5x-lease-0000000001"), None);
        assert_eq!(limit_of("_c_x-permits-5-lease-"), None);
    }
}
