//! `lockrun`: run a command while holding a distributed lock.
//!
//! `lockrun --url URL --name NAME [--wait 30s] [--lease 30s] -- COMMAND [ARGS...]` acquires the
//! lock, runs the command with `LOCK_NAME` and `LOCK_FENCING_TOKEN` set, releases when it exits
//! and exits with its status. If the lock is lost meanwhile, the command gets SIGTERM, then
//! SIGKILL after `--grace`. SIGTERM, SIGINT and SIGHUP sent to lockrun are passed to the command.

mod child;
mod cli;
mod exit;
mod run;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = match cli::Args::try_parse() {
        Ok(args) => args,
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
        Ok(runtime) => ExitCode::from(runtime.block_on(run::run(args))),
        Err(error) => {
            eprintln!("lockrun: cannot start the async runtime: {error}");
            ExitCode::from(exit::SOFTWARE)
        }
    }
}
