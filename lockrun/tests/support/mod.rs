//! What lockrun's test binaries share: starting lockrun, and watching the processes it starts.
#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use lock_testkit::scaled;

/// `lockrun --url URL --name NAME EXTRA... -- COMMAND...`.
pub fn lockrun(url: &str, name: &str, extra: &[&str], command: &[&str]) -> Command {
    let mut lockrun = Command::new(env!("CARGO_BIN_EXE_lockrun"));
    lockrun
        .args(["--url", url, "--name", name])
        .args(extra)
        .arg("--")
        .args(command);
    lockrun
}

/// An SQLite lock file in `dir`.
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("locks.db").display())
}

/// The pid a command wrote to `path`, once it is there.
pub fn read_pid(path: &Path) -> String {
    let deadline = Instant::now() + scaled(Duration::from_secs(10));
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if !text.trim().is_empty() {
            return text.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "no pid in {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` runs (a zombie does not).
pub fn alive(pid: &str) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// `kill SIGNAL PID`.
pub fn signal(pid: &str, signal: &str) {
    Command::new("kill")
        .args([signal, pid])
        .status()
        .expect("kill");
}
