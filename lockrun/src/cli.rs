//! Command-line arguments.

use std::ffi::OsString;
use std::time::Duration;

use clap::Parser;
use distlock::AcquireOptions;

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

The command runs in a process group of its own, watched by a supervisor process. When the hold
is at risk (renewals failing with a third of the lease left), or lockrun dies or stops
answering, the whole group gets SIGTERM, then SIGKILL after --grace, which must fit in that
third: the command and its children are gone before the lease can expire. See docs/lockrun.md
for what this guarantees and what it cannot (a frozen machine).

EXIT STATUS:
    the command's own status (128+N if it died of signal N), or
     64  invalid arguments, URL, lock name or options
     69  the lock service could not be reached
     70  lockrun failed otherwise
     75  the lock stayed held elsewhere for the whole --wait
     76  the hold was at risk or lost while the command ran; the command was stopped
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
    /// Default: the URL's `wait` parameter, else without limit.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) wait: Option<Duration>,

    /// The lease: how soon the lock frees itself if lockrun dies without releasing it.
    /// Renewed in the background while the command runs. Default: the URL's `lease`
    /// parameter, else 30s.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) lease: Option<Duration>,

    /// How long the command gets to exit after SIGTERM (sent when the hold is at risk) before
    /// SIGKILL. At most the at-risk margin (a third of the lease); by default half of it, at
    /// most 10s.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) grace: Option<Duration>,

    /// Stay quiet while waiting (by default a progress line goes to stderr every 10 s).
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// The command to run, and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

impl Args {
    /// The acquisition options: the service's defaults (its URL's parameters), with the
    /// flags' lease and wait, checked.
    pub(crate) fn options(&self, defaults: AcquireOptions) -> distlock::Result<AcquireOptions> {
        let mut options = defaults.to_builder();
        if let Some(lease) = self.lease {
            options = options.lease(lease);
        }
        if let Some(wait) = self.wait {
            options = options.wait(wait);
        }
        let options = options.build()?;
        let margin = options.lease.mul_f64(options.at_risk);
        if let Some(grace) = self.grace.filter(|grace| *grace > margin) {
            return Err(distlock::Error::invalid_input(format!(
                "--grace {grace:?} is longer than the at-risk margin {margin:?} ({} of the \
                 {:?} lease): the command could still run when another holder starts. Use a \
                 shorter --grace or a longer --lease",
                options.at_risk, options.lease
            )));
        }
        Ok(options)
    }

    /// The grace period: as given, or half the at-risk `margin`, at most 10 s.
    pub(crate) fn grace(&self, margin: Duration) -> Duration {
        self.grace
            .unwrap_or_else(|| (margin / 2).min(Duration::from_secs(10)))
    }
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|error| format!("{error} (write durations like 500ms, 30s, 5m)"))
}
