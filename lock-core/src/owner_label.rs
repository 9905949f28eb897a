//! The label a holder leaves with its hold, so an operator can tell who holds a lock.

use std::sync::{Arc, OnceLock};

use crate::{Error, Result};

/// The longest owner label, in bytes.
pub const MAX_OWNER_LABEL: usize = 128;

/// `HOST:PID` of this process, computed once.
pub(crate) fn default_owner_label() -> Arc<str> {
    static LABEL: OnceLock<Arc<str>> = OnceLock::new();
    Arc::clone(LABEL.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| std::env::var("COMPUTERNAME").ok())
            .map(|host| host.trim().to_owned())
            .filter(|host| !host.is_empty() && validate_owner_label(host).is_ok())
            .unwrap_or_else(|| "unknown-host".to_owned());
        let mut label = format!("{host}:{}", std::process::id());
        label.truncate(MAX_OWNER_LABEL);
        Arc::from(label)
    }))
}

/// Checks a label: 1 to [`MAX_OWNER_LABEL`] bytes, no control characters.
pub(crate) fn validate_owner_label(label: &str) -> Result<()> {
    if label.is_empty() || label.len() > MAX_OWNER_LABEL {
        return Err(Error::invalid_input(format!(
            "owner label {label:?} must be 1 to {MAX_OWNER_LABEL} bytes long"
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(Error::invalid_input(format!(
            "owner label {label:?} must not contain control characters"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_label_names_this_process() {
        let label = default_owner_label();
        assert!(validate_owner_label(&label).is_ok(), "{label}");
        let pid = std::process::id().to_string();
        assert!(label.ends_with(&format!(":{pid}")), "{label}");
    }
}
