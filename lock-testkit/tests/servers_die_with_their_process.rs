//! A server outlives no test process: whether the process exits without dropping it, or is
//! stopped by a signal sent to its whole process group (Ctrl-C in a terminal, `timeout`, a CI
//! runner's cancel), the server's watchdog kills it within about a second.
//!
//! Each test runs its own binary again as the child that starts a server and prints its pid;
//! the parent then ends the child and watches the server's pid.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lock_testkit::require;
use lock_testkit::servers::RedisServer;

/// Set in the child: how it ends once its server runs (`exit`, or `wait` for a signal).
const CHILD: &str = "LOCK_TESTKIT_ORPHANING_CHILD";

/// The child's exit code when redis-server is missing and not required: the test is skipped.
const SKIPPED: i32 = 3;

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// In the child: starts a server, prints its pid, then exits at once without dropping it, or
/// waits to be killed. Returns in the parent.
fn act_as_child() {
    let Some(how) = std::env::var_os(CHILD) else {
        return;
    };
    let Some(mut server) = require(RedisServer::start()) else {
        std::process::exit(SKIPPED);
    };
    println!("server-pid {}", server.process().pid().unwrap_or_default());
    if how == "exit" {
        std::process::exit(0); // no drop: only the watchdog can stop it now
    }
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// Runs this binary's test `test` as a child in a process group of its own, ending as `how`
/// says; returns the child and its server's pid, or `None` when the child skipped.
fn start_child(test: &str, how: &str) -> Option<(std::process::Child, u32)> {
    let mut child = Command::new(std::env::current_exe().expect("current_exe"))
        .args(["--exact", test, "--nocapture"])
        .env(CHILD, how)
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("run the child");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut printed = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read the child's output");
        if let Some(pid) = line.strip_prefix("server-pid ") {
            return Some((child, pid.trim().parse().expect("a pid")));
        }
        printed.push(line);
    }
    let status = child.wait().expect("wait for the child");
    if status.code() == Some(SKIPPED) {
        return None;
    }
    panic!("the child printed no server pid ({status}): {printed:?}");
}

/// Waits up to 5 s for `pid` to end; kills it if it did not, and fails.
fn assert_dies(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let orphaned = alive(pid);
    if orphaned {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        !orphaned,
        "the server outlived the test process that started it"
    );
}

/// A test process that dies without dropping its server (a static, a panic with abort, an
/// `exit`) leaves no server behind.
#[test]
fn a_server_dies_with_the_test_process_that_started_it() {
    act_as_child();
    let Some((mut child, pid)) = start_child(
        "a_server_dies_with_the_test_process_that_started_it",
        "exit",
    ) else {
        return;
    };
    child.wait().expect("wait for the child");
    assert_dies(pid);
}

/// A signal to the test process's whole group (Ctrl-C in a terminal, `timeout`, a CI runner's
/// cancel) reaches every process in it: it must not stop the watchdog with the test process.
#[test]
fn a_server_dies_when_its_test_process_group_is_interrupted() {
    act_as_child();
    let Some((mut child, pid)) = start_child(
        "a_server_dies_when_its_test_process_group_is_interrupted",
        "wait",
    ) else {
        return;
    };
    for signal in ["-INT", "-TERM"] {
        let _ = Command::new("kill")
            .args([signal, "--", &format!("-{}", child.id())])
            .status();
    }
    child.wait().expect("wait for the child");
    assert_dies(pid);
}
