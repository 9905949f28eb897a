//! The last step before the command: `lockrun __lockrun-exec SUPERVISOR_PID -- COMMAND...`
//! asks the kernel to kill this process when its parent (the supervisor) dies, then replaces
//! itself with the command, which keeps that request.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::process::{Signal, getppid, set_parent_process_death_signal};

use crate::exit;

/// The hidden first argument that runs lockrun as the exec step.
pub(crate) const ARG: &str = "__lockrun-exec";

/// Execs the command; returns only if that fails, with the status to exit with.
pub(crate) fn main(args: &[OsString]) -> u8 {
    let (Some(parent), Some(separator), Some(program)) = (args.first(), args.get(1), args.get(2))
    else {
        return exit::USAGE;
    };
    if separator != "--" {
        return exit::USAGE;
    }
    if set_parent_process_death_signal(Some(Signal::KILL)).is_err() {
        return exit::SOFTWARE;
    }
    // The supervisor may have died before the request took effect: then our parent changed.
    let parent_alive = getppid().is_some_and(|pid| {
        Some(pid.as_raw_nonzero().get().to_string()) == parent.to_str().map(str::to_owned)
    });
    if !parent_alive {
        return exit::SOFTWARE;
    }
    let error = Command::new(program).args(&args[3..]).exec();
    eprintln!("lockrun: cannot run {program:?}: {error}");
    if error.kind() == std::io::ErrorKind::NotFound {
        exit::NOT_FOUND
    } else {
        exit::CANNOT_EXECUTE
    }
}
