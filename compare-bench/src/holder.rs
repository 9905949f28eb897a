//! `lock-holder hold` processes for the crash scenario: a lock holder in its own process,
//! killed with SIGKILL.

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
        let mut command = Command::new(holder_binary()?);
        command.args(["hold", url, name]);
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
            Ok(line) if line.starts_with("acquired ") => Ok(holder),
            other => {
                holder.kill();
                Err(format!("lock-holder did not acquire {name:?}: {other:?}").into())
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
