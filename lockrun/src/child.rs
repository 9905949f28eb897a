//! The command lockrun runs: started with the lock's details, stopped gracefully if the lock
//! is lost.

use std::ffi::OsString;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process};
use tokio::process::{Child, Command};

use crate::exit;

/// Starts `command` with `LOCK_NAME` and `LOCK_FENCING_TOKEN` in its environment.
///
/// On failure returns the exit status to use: 127 when not found, 126 otherwise.
pub(crate) fn spawn(command: &[OsString], name: &str, fencing_token: u64) -> Result<Child, u8> {
    let Some((program, args)) = command.split_first() else {
        return Err(exit::USAGE);
    };
    Command::new(program)
        .args(args)
        .env("LOCK_NAME", name)
        .env("LOCK_FENCING_TOKEN", fencing_token.to_string())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| {
            eprintln!("lockrun: cannot run {program:?}: {error}");
            if error.kind() == std::io::ErrorKind::NotFound {
                exit::NOT_FOUND
            } else {
                exit::CANNOT_EXECUTE
            }
        })
}

/// Sends `signal` to the child if it still runs.
pub(crate) fn signal(child: &Child, signal: Signal) {
    if let Some(pid) = child.id().and_then(|id| Pid::from_raw(id as i32)) {
        let _ = kill_process(pid, signal);
    }
}

/// Asks the child to stop with SIGTERM, then kills it with SIGKILL after `grace`.
pub(crate) async fn terminate(child: &mut Child, grace: Duration) {
    signal(child, Signal::TERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        eprintln!("lockrun: the command ignored SIGTERM for {grace:?}; sending SIGKILL");
        let _ = child.kill().await;
    }
}
