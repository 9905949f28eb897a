//! Which ACL lock nodes and their parents get.

use std::fmt;

use lock_core::{Error, Result};
use zookeeper_client::{Acl, AuthId, Permission};

/// The ACL this backend puts on the lock nodes it creates and on the parents it creates for them.
#[derive(Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ZkAcl {
    /// `world:anyone` may do everything (ZooKeeper's `OPEN_ACL_UNSAFE`; the default).
    #[default]
    Open,
    /// Only the creating identity may do anything (`CREATOR_ALL_ACL`); needs digest auth.
    CreatorAll,
    /// The creator may do everything and everyone may read; needs digest auth.
    CreatorAllWorldRead,
    /// Explicit entries.
    Custom(Vec<Acl>),
}

impl ZkAcl {
    /// Parses `open`, `creator`, `creator-read`, or a comma-separated list of
    /// `scheme:id:perms` entries (perms from `cdrwa`, e.g. `digest:bob:HASH=:cdrwa,world:anyone:r`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) naming the bad entry.
    pub fn parse(text: &str) -> Result<Self> {
        match text {
            "open" => return Ok(Self::Open),
            "creator" => return Ok(Self::CreatorAll),
            "creator-read" => return Ok(Self::CreatorAllWorldRead),
            _ => {}
        }
        let entries = text
            .split(',')
            .map(parse_entry)
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::Custom(entries))
    }

    /// Whether the ACL names the creator, which ZooKeeper only accepts from an authenticated
    /// session.
    pub(crate) fn needs_auth(&self) -> bool {
        matches!(self, Self::CreatorAll | Self::CreatorAllWorldRead)
    }

    /// The entries sent with each create.
    pub(crate) fn entries(&self) -> Vec<Acl> {
        match self {
            Self::Open => vec![Acl::new(Permission::ALL, AuthId::anyone())],
            Self::CreatorAll => vec![Acl::new(Permission::ALL, AuthId::authed())],
            Self::CreatorAllWorldRead => vec![
                Acl::new(Permission::ALL, AuthId::authed()),
                Acl::new(Permission::READ, AuthId::anyone()),
            ],
            Self::Custom(entries) => entries.clone(),
        }
    }
}

fn parse_entry(entry: &str) -> Result<Acl> {
    let bad = || {
        Error::invalid_input(format!(
            "ACL entry {entry:?} is not scheme:id:perms (perms from cdrwa, e.g. world:anyone:cdrwa)"
        ))
    };
    let (scheme, rest) = entry.split_once(':').ok_or_else(bad)?;
    let (id, perms) = rest.rsplit_once(':').ok_or_else(bad)?;
    if scheme.is_empty() || id.is_empty() || perms.is_empty() {
        return Err(bad());
    }
    let mut permission = Permission::NONE;
    for letter in perms.chars() {
        permission = permission
            | match letter {
                'c' => Permission::CREATE,
                'd' => Permission::DELETE,
                'r' => Permission::READ,
                'w' => Permission::WRITE,
                'a' => Permission::ADMIN,
                _ => return Err(bad()),
            };
    }
    Ok(Acl::new(permission, AuthId::new(scheme, id)))
}

impl fmt::Debug for ZkAcl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Open => f.write_str("Open"),
            Self::CreatorAll => f.write_str("CreatorAll"),
            Self::CreatorAllWorldRead => f.write_str("CreatorAllWorldRead"),
            // Digest ids carry password hashes: print schemes and permissions only.
            Self::Custom(entries) => f
                .debug_list()
                .entries(
                    entries
                        .iter()
                        .map(|acl| format!("{}:<id>:{}", acl.scheme(), acl.permission())),
                )
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_presets_and_entries() {
        assert_eq!(ZkAcl::parse("open").ok(), Some(ZkAcl::Open));
        assert_eq!(ZkAcl::parse("creator").ok(), Some(ZkAcl::CreatorAll));
        let custom = ZkAcl::parse("digest:bob:aGFzaA=:cdrwa,world:anyone:r").expect("valid ACL");
        let entries = custom.entries();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].scheme(), "digest");
        assert_eq!(entries[0].id(), "bob:aGFzaA=");
        assert_eq!(entries[0].permission(), Permission::ALL);
        assert_eq!(entries[1].permission(), Permission::READ);
        assert!(
            !format!("{custom:?}").contains("aGFzaA"),
            "Debug shows the hash"
        );
    }

    #[test]
    fn rejects_malformed_entries() {
        for bad in [
            "world",
            "world:anyone",
            "world:anyone:x",
            ":anyone:r",
            "world::r",
        ] {
            assert!(ZkAcl::parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
