//! Command-line arguments.

use std::ffi::OsString;
use std::time::Duration;

use clap::Parser;

/// Runs a command while holding a distributed lock, so it runs on one host at a time.
#[derive(Debug, Parser)]
#[command(
    name = "lockrun",
    version,
    after_help = "EXAMPLES:
    # Run the nightly report on one replica only; others wait up to 5 minutes, then give up.
    lockrun --url postgres://app@db/app --name reports/nightly --wait 5m -- ./nightly-report

    # Skip the run if another host is already doing it (wait 0).
    lockrun --url redis://cache:6379 --name cron/cleanup --wait 0s -- ./cleanup.sh

    # Single host, no server: an SQLite file shared by every process on the machine.
    lockrun --url sqlite:///var/lib/lockrun/locks.db --name backup -- tar czf /backup/db.tgz /data

The command sees LOCK_NAME and LOCK_FENCING_TOKEN (a number larger than every earlier holder's):
pass the token to storage that can reject writes from a stale holder.

EXIT STATUS:
    the command's own status (128+N if it died of signal N), or
     64  invalid arguments, URL, lock name or options
     69  the lock service could not be reached
     70  lockrun failed otherwise
     75  the lock stayed held elsewhere for the whole --wait
     76  the lock was lost while the command ran; the command was terminated
    126  the command could not be executed
    127  the command was not found"
)]
pub(crate) struct Args {
    /// Lock service URL: zk://, redis://, rediss://, postgres://, mysql://, sqlite://PATH.
    #[arg(long, env = "LOCKRUN_URL")]
    pub(crate) url: String,

    /// The lock's name; every process using the same name and service excludes the others.
    #[arg(long)]
    pub(crate) name: String,

    /// How long to wait while the lock is held elsewhere (for example 30s, 5m; 0s: try once).
    /// Waits without limit when not given.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) wait: Option<Duration>,

    /// The lease: how soon the lock frees itself if lockrun dies without releasing it.
    /// Renewed in the background while the command runs.
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    pub(crate) lease: Duration,

    /// How long the command gets to exit after SIGTERM (sent when the lock is lost) before
    /// SIGKILL.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub(crate) grace: Duration,

    /// Stay quiet while waiting (by default a progress line goes to stderr every 10 s).
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// The command to run, and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|error| format!("{error} (write durations like 500ms, 30s, 5m)"))
}
