//! The subcommands that show and free locks: `status`, `list`, `leader` and `break`. Each connects,
//! asks the service once, and prints the answer as text or, with `--json`, as JSON.

use distlock::{DistributedLock, ElectionExt, LockName};

use crate::{exit, json, text};

/// A subcommand.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Admin {
    /// Show who holds a lock and how many wait for it
    ///
    /// Shows each holder's owner label, fencing token, grant time and lease left, and how many
    /// acquisitions wait. A free lock is reported as free, with status 0.
    Status {
        #[command(flatten)]
        service: Service,

        /// The lock's name.
        name: LockName,
    },

    /// List the locks held now
    ///
    /// Prints the names of the locks held now, sorted, one a line: those starting with PREFIX,
    /// or all.
    List {
        #[command(flatten)]
        service: Service,

        /// Only names starting with this.
        prefix: Option<String>,
    },

    /// Show who leads an election
    ///
    /// Prints the leader's published value, its epoch (the fencing token it stamps its writes
    /// with) and its term (how many leaders the election has had, where the store counts
    /// them). Status 3 when nobody leads.
    Leader {
        #[command(flatten)]
        service: Service,

        /// The election's name.
        name: LockName,
    },

    /// Free a stuck holder's lock, named by its fencing token
    ///
    /// Ends the hold whose fencing token is TOKEN (as `status` shows it) behind its holder's
    /// back; a newer holder is never touched. The holder learns it lost the lock at its next
    /// renewal (a lockrun holding it stops its command, with status 76). Status 3 when TOKEN
    /// no longer holds the lock: nothing was changed.
    Break {
        #[command(flatten)]
        service: Service,

        /// The lock's name.
        name: LockName,

        /// The fencing token of the hold to end.
        #[arg(value_name = "TOKEN")]
        fencing_token: u64,
    },
}

/// The arguments every subcommand takes.
#[derive(Debug, clap::Args)]
pub(crate) struct Service {
    /// Lock service URL: zk://, redis://, rediss://, postgres://, mysql://, sqlite://PATH.
    #[arg(long, env = "LOCKRUN_URL")]
    url: String,

    /// Print one JSON value on stdout instead of text: an object for status and break, an
    /// array of names for list.
    #[arg(long)]
    json: bool,
}

impl Admin {
    fn service(&self) -> &Service {
        match self {
            Admin::Status { service, .. }
            | Admin::List { service, .. }
            | Admin::Leader { service, .. }
            | Admin::Break { service, .. } => service,
        }
    }
}

/// Runs the subcommand and returns lockrun's exit status.
pub(crate) async fn run(admin: Admin) -> u8 {
    let lock = match distlock::connect(&admin.service().url).await {
        Ok(lock) => lock,
        Err(error) => return fail(&error),
    };
    match ask(&*lock, &admin).await {
        Ok(status) => status,
        Err(error) => fail(&error),
    }
}

/// Asks the service what `admin` wants to know or do, prints the answer, and returns the
/// exit status.
async fn ask(lock: &dyn DistributedLock, admin: &Admin) -> distlock::Result<u8> {
    let as_json = admin.service().json;
    match admin {
        Admin::Status { name, .. } => {
            let status = lock.inspect(name).await?;
            print(&if as_json {
                json::status(name, &status)
            } else {
                text::status(name, &status)
            });
            Ok(0)
        }
        Admin::List { prefix, .. } => {
            let prefix = prefix.as_deref().unwrap_or_default();
            let names = lock.list(prefix).await?;
            if as_json {
                print(&json::list(&names));
            } else if names.is_empty() {
                eprintln!("lockrun: {}", text::none_held(prefix));
            } else {
                print(&text::list(&names));
            }
            Ok(0)
        }
        Admin::Leader { name, .. } => {
            let leader = lock.leader(name).await?;
            if as_json {
                print(&json::leader(name, leader.as_ref()));
            } else if let Some(leader) = &leader {
                print(&text::leader(name, leader));
            } else {
                eprintln!("lockrun: nobody leads {name}");
            }
            Ok(if leader.is_some() { 0 } else { exit::NO_LEADER })
        }
        Admin::Break {
            name,
            fencing_token,
            ..
        } => {
            let released = lock.force_release(name, *fencing_token).await?;
            if as_json {
                print(&json::broken(name, *fencing_token, released));
            } else if released {
                print(&text::broken(name, *fencing_token));
            } else {
                eprintln!("lockrun: {}", text::not_broken(name, *fencing_token));
            }
            Ok(if released { 0 } else { exit::NOT_RELEASED })
        }
    }
}

/// Prints `answer` and a newline on stdout. A reader that went away (`| head`) changes
/// nothing about what the service did, so a failed write is not an error.
fn print(answer: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{answer}");
}

fn fail(error: &distlock::Error) -> u8 {
    eprintln!("lockrun: {error}");
    exit::for_error(error)
}
