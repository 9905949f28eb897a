//! What lockrun's test binaries share: starting lockrun, and watching the processes it starts.
#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

pub mod admin;

use std::path::Path;
use std::process::{Command, Output};
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

/// `lockrun ARGS...`: a subcommand such as `status`, run to completion.
pub fn lockrun_admin(args: &[&str]) -> Output {
    admin_command(args).output().expect("run lockrun")
}

/// `lockrun ARGS...`, to be run.
pub fn admin_command(args: &[&str]) -> Command {
    let mut lockrun = Command::new(env!("CARGO_BIN_EXE_lockrun"));
    lockrun.args(args);
    lockrun
}

/// An SQLite lock file in `dir`.
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("locks.db").display())
}

/// The pid a command wrote to `path`, once it is there.
pub fn read_pid(path: &Path) -> String {
    read_written(path)
}

/// The text (trimmed) a command wrote to `path`, once there is some.
pub fn read_written(path: &Path) -> String {
    let deadline = Instant::now() + scaled(Duration::from_secs(10));
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if !text.trim().is_empty() {
            return text.trim().to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "nothing written to {}",
            path.display()
        );
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

/// The first child process of `parent` to appear (its pid), looked for every millisecond.
pub fn first_child(parent: u32) -> String {
    let deadline = Instant::now() + scaled(Duration::from_secs(10));
    loop {
        let entries = std::fs::read_dir("/proc").expect("read /proc");
        for entry in entries.flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // After the command name in parentheses: state, then the parent's pid.
            let ppid = stat
                .rfind(')')
                .and_then(|end| stat[end + 1..].split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok());
            if ppid == Some(parent) {
                return pid;
            }
        }
        assert!(
            Instant::now() < deadline,
            "process {parent} started no child"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `kill SIGNAL PID`.
pub fn signal(pid: &str, signal: &str) {
    Command::new("kill")
        .args([signal, pid])
        .status()
        .expect("kill");
}
