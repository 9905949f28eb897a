//! Command-line arguments: the run mode (`lockrun --url U --name N -- CMD`, the default) and
//! the subcommands that show and free locks.

use std::ffi::OsString;
use std::time::Duration;

use clap::Parser;
use distlock::{AcquireOptions, Claim};

use crate::admin::Admin;
use crate::help::AFTER_HELP;

/// Runs a command while holding a distributed lock, so it runs on one host at a time
///
/// Runs a command while holding a distributed lock, so it runs on one host at a time. The
/// subcommands show who holds a lock, list the held locks, and free a stuck holder's lock.
#[derive(Debug, Parser)]
#[command(
    name = "lockrun",
    version,
    after_help = AFTER_HELP,
    // Without a subcommand the run mode's arguments are required; once one of them is given,
    // a following word is never taken for a subcommand.
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true,
    subcommand_value_name = "SUBCOMMAND",
    subcommand_help_heading = "Subcommands"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    admin: Option<Admin>,

    #[command(flatten)]
    run: Args,
}

/// What lockrun was asked to do.
#[derive(Debug)]
pub(crate) enum Mode {
    /// Run a command under the lock.
    Run(Args),
    /// Show or free locks.
    Admin(Admin),
}

impl Cli {
    /// The mode the arguments select.
    pub(crate) fn mode(self) -> Mode {
        match self.admin {
            Some(admin) => Mode::Admin(admin),
            None => Mode::Run(self.run),
        }
    }
}

/// The run mode's arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Lock service URL: zk://, redis://, rediss://, postgres://, mysql://, sqlite://PATH.
    #[arg(long, env = "LOCKRUN_URL", required = true)]
    url: Option<String>,

    /// The lock's name; every process using the same name and service excludes the others.
    #[arg(long, required_unless_present = "elect")]
    name: Option<String>,

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

    /// The longest the lock may be held, renewals included (for example 2h): the command is
    /// stopped before the hold reaches it, as when the hold is at risk (status 76). Default:
    /// the URL's `max_hold` parameter, else no limit.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub(crate) max_hold: Option<Duration>,

    /// Who holds, as `lockrun status` shows it (at most 128 printable bytes). Default: the
    /// URL's `owner_label` parameter, else HOST:PID.
    #[arg(long, value_name = "TEXT")]
    pub(crate) owner_label: Option<String>,

    /// Run under one of N permits of the semaphore NAME instead of the lock: at most N
    /// commands run at once. Every lockrun using NAME must give the same N.
    #[arg(long, value_name = "N", group = "shared")]
    pub(crate) permits: Option<u32>,

    /// Run under a read hold of the read-write lock NAME: shared with other readers, never
    /// with a writer.
    #[arg(long, group = "shared")]
    pub(crate) read: bool,

    /// Run under the write hold of the read-write lock NAME: alone; waiting writers block new
    /// readers.
    #[arg(long, group = "shared")]
    pub(crate) write: bool,

    /// Run only while leading the election NAME (instead of holding a lock): the command
    /// starts once this lockrun is elected, sees LOCK_EPOCH, and is stopped when the
    /// leadership is at risk. `lockrun leader NAME` shows who leads.
    #[arg(long, value_name = "NAME", group = "shared", conflicts_with = "name")]
    pub(crate) elect: Option<String>,

    /// With --elect: the value this candidate publishes while it leads (an address or id
    /// followers use; at most 128 printable bytes). Default: HOST:PID.
    #[arg(
        long,
        value_name = "TEXT",
        requires = "elect",
        conflicts_with = "owner_label"
    )]
    pub(crate) value: Option<String>,

    /// Stay quiet while waiting (by default a progress line goes to stderr every 10 s).
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// The command to run, and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

impl Args {
    /// The service URL (clap requires it in the run mode).
    pub(crate) fn url(&self) -> &str {
        self.url.as_deref().unwrap_or_default()
    }

    /// The lock's or election's name (clap requires one in the run mode).
    pub(crate) fn name(&self) -> &str {
        self.elect
            .as_deref()
            .or(self.name.as_deref())
            .unwrap_or_default()
    }

    /// What the command runs under: the lock (`None`), a semaphore permit, a read or write
    /// hold.
    pub(crate) fn claim(&self) -> Option<Claim> {
        match (self.permits, self.read, self.write) {
            (Some(permits), _, _) => Some(Claim::permit(permits)),
            (None, true, _) => Some(Claim::Read),
            (None, false, true) => Some(Claim::Write),
            (None, false, false) => None,
        }
    }

    /// The acquisition options: the service's defaults (its URL's parameters), with the
    /// flags' lease, wait, max hold and owner label, checked.
    pub(crate) fn options(&self, defaults: AcquireOptions) -> distlock::Result<AcquireOptions> {
        if self.value.is_some() && self.elect.is_none() {
            return Err(distlock::Error::invalid_input(
                "--value is what an elected candidate publishes: give --elect NAME too",
            ));
        }
        let mut options = defaults.to_builder();
        if let Some(lease) = self.lease {
            options = options.lease(lease);
        }
        if let Some(wait) = self.wait {
            options = options.wait(wait);
        }
        if let Some(max_hold) = self.max_hold {
            options = options.max_hold(max_hold);
        }
        if let Some(label) = self.owner_label.as_ref().or(self.value.as_ref()) {
            options = options.owner_label(label.as_str());
        }
        let options = options.build()?;
        if let Some(claim) = self.claim() {
            claim.validate()?;
        }
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

/// Parses a duration flag (`500ms`, `30s`, `5m`).
fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|error| format!("{error} (write durations like 500ms, 30s, 5m)"))
}
