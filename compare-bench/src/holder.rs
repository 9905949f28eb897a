//! `lock-holder hold` processes for the crash scenario: a lock holder in its own process,
//! killed with SIGKILL.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::BenchResult;

/// Where `lock-holder` is: `LOCK_HOLDER` if set, else `target/debug/lock-holder` beside this
/// program's target directory (built by `cargo build -p lock-testkit --bins --all-features`).
pub fn holder_binary() -> BenchResult<PathBuf> {
    if let Some(path) = std::env::var_os("LOCK_HOLDER") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    let candidates = exe
        .ancestors()
        .skip(1)
        .take(3)
        .flat_map(|dir| [dir.join("lock-holder"), dir.join("debug/lock-holder")]);
    for candidate in candidates {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err("lock-holder is not built: cargo build -p lock-testkit --bins --all-features".into())
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
