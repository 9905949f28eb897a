//! `lock-holder hold` and `lock-holder lead` processes for the crash and election scenarios:
//! a lock holder or an election leader in its own process, killed with SIGKILL.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::BenchResult;

/// Where `lock-holder` is: beside this program (`scripts/compare` builds both), by the lab's
/// one rule for programs.
pub fn holder_binary() -> BenchResult<PathBuf> {
    let holder = std::env::current_exe()?.with_file_name("lock-holder");
    if holder.is_file() {
        return Ok(holder);
    }
    Err(format!(
        "{} is not built: cargo build --release -p lock-lab --bins (scripts/compare does)",
        holder.display()
    )
    .into())
}

/// A process holding a lock; killed (SIGKILL) on drop.
#[derive(Debug)]
pub struct HolderProcess {
    child: Child,
}

impl HolderProcess {
    /// Starts `lock-holder hold URL NAME [LEASE_MS]` and waits up to `wait` for its grant.
    ///
    /// # Errors
    ///
    /// The process did not start or did not report a grant in time.
    pub fn acquire(
        url: &str,
        name: &str,
        lease: Option<Duration>,
        wait: Duration,
    ) -> BenchResult<Self> {
        Self::start(["hold", url, name], lease, wait, "acquired ")
    }

    /// Starts `lock-holder lead URL NAME [LEASE_MS]` and waits up to `wait` until it leads the
    /// election `name`.
    ///
    /// # Errors
    ///
    /// The process did not start or did not report leading in time.
    pub fn lead(
        url: &str,
        name: &str,
        lease: Option<Duration>,
        wait: Duration,
    ) -> BenchResult<Self> {
        Self::start(["lead", url, name], lease, wait, "leading ")
    }

    /// Starts `lock-holder MODE URL NAME [LEASE_MS]` and waits up to `wait` for a first line
    /// starting with `expected`.
    fn start(
        args: [&str; 3],
        lease: Option<Duration>,
        wait: Duration,
        expected: &str,
    ) -> BenchResult<Self> {
        let name = args[2];
        let mut command = Command::new(holder_binary()?);
        command.args(args);
        if let Some(lease) = lease {
            command.arg(lease.as_millis().to_string());
        }
        let mut child = command.stdout(Stdio::piped()).spawn()?;
        let stdout = child.stdout.take().ok_or("lock-holder has no stdout")?;
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let mut holder = Self { child };
        match receiver.recv_timeout(wait) {
            Ok(line) if line.starts_with(expected) => Ok(holder),
            other => {
                holder.kill();
                Err(format!("lock-holder did not get {name:?}: {other:?}").into())
            }
        }
    }

    /// SIGKILL, as a crash, and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HolderProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
