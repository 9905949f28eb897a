//! Exit statuses, as documented in `--help`.

use std::process::ExitStatus;

use distlock::{Error, ErrorKind};

/// `break`: the fencing token given no longer holds the lock; nothing was changed.
pub(crate) const NOT_RELEASED: u8 = 3;
/// `leader`: nobody leads the election.
pub(crate) const NO_LEADER: u8 = 3;
/// Invalid arguments, URL, lock name or options.
pub(crate) const USAGE: u8 = 64;
/// The lock service could not be reached.
pub(crate) const UNAVAILABLE: u8 = 69;
/// Any other failure of lockrun itself.
pub(crate) const SOFTWARE: u8 = 70;
/// The lock stayed held elsewhere for the whole wait.
pub(crate) const TIMEOUT: u8 = 75;
/// The lock was lost while the command ran.
pub(crate) const LOST: u8 = 76;
/// The command exists but could not be executed.
pub(crate) const CANNOT_EXECUTE: u8 = 126;
/// The command was not found.
pub(crate) const NOT_FOUND: u8 = 127;

/// The status for a lock-service error.
pub(crate) fn for_error(error: &Error) -> u8 {
    match error.kind() {
        ErrorKind::InvalidInput => USAGE,
        ErrorKind::Unavailable => UNAVAILABLE,
        ErrorKind::Timeout => TIMEOUT,
        ErrorKind::Lost | ErrorKind::NotHeld => LOST,
        _ => SOFTWARE,
    }
}

/// The status for the command's own exit: its code, or 128 + the signal that killed it.
pub(crate) fn for_child(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code.clamp(0, 255) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => SOFTWARE,
    }
}
