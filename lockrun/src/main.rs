//! `lockrun`: run a command while holding a distributed lock.
//!
//! `lockrun --url URL --name NAME [--wait 30s] [--lease 30s] -- COMMAND [ARGS...]` acquires the
//! lock, runs the command with `LOCK_NAME` and `LOCK_FENCING_TOKEN` set, releases when it exits
//! and exits with its status. The command runs in a process group of its own under a supervisor
//! process, which stops the whole group (SIGTERM, then SIGKILL after `--grace`) when the hold
//! is at risk, or when lockrun dies or freezes, before the lease can expire. SIGTERM, SIGINT and
//! SIGHUP sent to lockrun are passed to the command's group. `--elect NAME` runs the command
//! only while this lockrun leads the election NAME, with `LOCK_EPOCH` set.
//!
//! `lockrun status NAME`, `lockrun list [PREFIX]`, `lockrun leader NAME` and
//! `lockrun break NAME TOKEN` show who holds a lock, list the held locks, show who leads an
//! election, and free a stuck holder's lock (`--json` for scripts).

mod admin;
mod cli;
mod control;
mod deadline;
mod exec;
mod exit;
mod help;
mod json;
mod run;
mod signals;
mod supervised;
mod supervisor;
mod text;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match argv.get(1).and_then(|arg| arg.to_str()) {
        Some(supervisor::ARG) => return ExitCode::from(supervisor::main(&argv[2..])),
        Some(exec::ARG) => return ExitCode::from(exec::main(&argv[2..])),
        _ => {}
    }
    let mode = match cli::Cli::try_parse_from(argv) {
        Ok(cli) => cli.mode(),
        Err(error) => {
            let usage = error.use_stderr();
            let _ = error.print();
            return ExitCode::from(if usage { exit::USAGE } else { 0 });
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => ExitCode::from(runtime.block_on(async {
            match mode {
                cli::Mode::Run(args) => run::run(args).await,
                cli::Mode::Admin(admin) => admin::run(admin).await,
            }
        })),
        Err(error) => {
            eprintln!("lockrun: cannot start the async runtime: {error}");
            ExitCode::from(exit::SOFTWARE)
        }
    }
}
