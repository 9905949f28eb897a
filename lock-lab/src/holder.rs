//! Runs `lock-holder` processes from tests.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

/// The program `name` built beside the running program (the `chaos` runner finds
/// `lock-holder` this way). Tests name programs with `env!("CARGO_BIN_EXE_<name>")` instead.
///
/// # Panics
///
/// When it is not there; the message says how to build it.
pub fn beside_current_exe(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|error| panic!("current_exe: {error}"));
    let program = exe.with_file_name(name);
    assert!(
        program.is_file(),
        "{} is missing: build it with `cargo build -p lock-lab --bins`",
        program.display()
    );
    program
}

/// A `lock-holder hold` process that has acquired its lock. Killed on drop.
#[derive(Debug)]
pub struct Holder {
    child: Child,
    fencing_token: u64,
}

impl Holder {
    /// Starts `lock-holder hold URL NAME [LEASE_MS]` (the program at `holder`) and waits up to
    /// `wait` for it to acquire.
    ///
    /// # Panics
    ///
    /// When the process cannot start or does not report a grant.
    pub fn acquire(
        holder: &Path,
        url: &str,
        name: &str,
        lease: Option<Duration>,
        wait: Duration,
    ) -> Self {
        let mut command = Command::new(holder);
        command.args(["hold", url, name]);
        if let Some(lease) = lease {
            command.arg(lease.as_millis().to_string());
        }
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("spawn lock-holder: {error}"));
        let stdout = child
            .stdout
            .take()
            .unwrap_or_else(|| panic!("lock-holder has no stdout"));
        let line = read_line_within(stdout, wait);
        let token = line
            .as_deref()
            .and_then(|line| line.trim().strip_prefix("acquired "))
            .and_then(|t| t.parse().ok());
        match token {
            Some(fencing_token) => Self {
                child,
                fencing_token,
            },
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("lock-holder did not acquire {name:?} within {wait:?} (said {line:?})");
            }
        }
    }

    /// The fencing token the process was granted.
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// Kills the process with SIGKILL, as a crash would, and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        self.kill();
    }
}

fn read_line_within(stdout: ChildStdout, wait: Duration) -> Option<String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    receiver.recv_timeout(wait).ok()
}

/// What one `lock-holder contend` process reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contention {
    /// Fencing tokens in the order this process was granted them.
    pub tokens: Vec<u64>,
    /// Holds during which another process was inside too.
    pub overlaps: usize,
}

/// Starts `lock-holder contend URL NAME ROUNDS MARKER` (the program at `holder`); collect it
/// with [`finish_contender`].
///
/// # Panics
///
/// When the process cannot start.
pub fn start_contender(
    holder: &Path,
    url: &str,
    name: &str,
    rounds: usize,
    marker: &Path,
) -> Child {
    Command::new(holder)
        .args(["contend", url, name, &rounds.to_string()])
        .arg(marker)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("spawn lock-holder: {error}"))
}

/// Waits for a contender and parses its report.
///
/// # Panics
///
/// When it failed or printed no report.
pub fn finish_contender(child: Child) -> Contention {
    let output = child
        .wait_with_output()
        .unwrap_or_else(|error| panic!("lock-holder: {error}"));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "lock-holder contend failed ({}): {text}",
        output.status
    );
    let field = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key))
            .unwrap_or_default()
            .to_owned()
    };
    Contention {
        tokens: field("tokens ")
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect(),
        overlaps: field("overlaps ")
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no overlap count in {text:?}")),
    }
}
