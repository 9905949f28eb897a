//! The random tokens that name an acquisition (its owner token) and its waiter entry.

/// A random 128-bit token: an acquisition's owner token, or its waiter entry's id.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner([u8; 16]);

impl Owner {
    pub(crate) fn random() -> Self {
        Self(rand::random::<u128>().to_be_bytes())
    }

    /// A random token beginning with the 8 bytes of `service`: a waiter entry's id, which names
    /// its service's channel to a PostgreSQL release ([`crate::listener::service_channel`]).
    pub(crate) fn in_service(service: u64) -> Self {
        let mut bytes = rand::random::<u128>().to_be_bytes();
        bytes[..8].copy_from_slice(&service.to_be_bytes());
        Self(bytes)
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The token as 32 hex digits, as a claim row stores it.
    pub(crate) fn to_hex(self) -> String {
        format!("{:032x}", u128::from_be_bytes(self.0))
    }

    /// The token from 32 hex digits.
    pub(crate) fn from_hex(hex: &str) -> Option<Self> {
        let valid = hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit());
        let value = u128::from_str_radix(hex, 16).ok().filter(|_| valid)?;
        Some(Self(value.to_be_bytes()))
    }
}

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", u128::from_be_bytes(self.0))
    }
}
