//! What lockrun's supervisor guarantees: the command (with every process it started) is gone
//! before another holder can be granted the lock, whether lockrun is killed, frozen, or loses
//! the hold, and a grace period that would not fit before the lease ends is refused.

use std::time::{Duration, Instant};

mod support;

use support::{alive, first_child, lockrun, read_pid, signal, sqlite_url};

/// lockrun killed with SIGKILL 1.5 s into an 8 s command: by the time the next lockrun's
/// command starts, the first command is gone.
#[test]
fn a_killed_lockrun_leaves_no_command_running_for_the_next_holder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let pid_file = dir.path().join("pid");
    let mut first = lockrun(
        &url,
        "killed",
        &["--lease", "2s"],
        &["sh", "-c", "echo $$ > \"$PIDFILE\"; exec sleep 8"],
    )
    .env("PIDFILE", &pid_file)
    .spawn()
    .expect("start lockrun");
    let pid = read_pid(&pid_file);
    std::thread::sleep(Duration::from_millis(1500));
    first.kill().expect("SIGKILL lockrun");
    let _ = first.wait();
    let second = lockrun(
        &url,
        "killed",
        &["--wait", "10s"],
        &[
            "sh",
            "-c",
            "if kill -0 \"$FIRST\" 2>/dev/null; then echo overlap; fi",
        ],
    )
    .env("FIRST", &pid)
    .output()
    .expect("second lockrun");
    let still_running = alive(&pid);
    signal(&pid, "-KILL");
    assert_eq!(second.status.code(), Some(0), "{second:?}");
    assert!(
        !String::from_utf8_lossy(&second.stdout).contains("overlap"),
        "the killed lockrun's command still ran when the next holder's started"
    );
    assert!(!still_running, "the killed lockrun's command outlived it");
}

/// lockrun frozen (SIGSTOP) past its 1 s lease while its command runs a grandchild: the
/// supervisor stops the whole group before the lease ends, and on resume lockrun exits 76.
#[test]
fn a_frozen_lockrun_has_its_command_and_grandchildren_stopped_before_the_lease_ends() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let pid_file = dir.path().join("grandchild");
    let mut holder = lockrun(
        &url,
        "frozen",
        &["--lease", "1s", "--grace", "200ms"],
        &["sh", "-c", "sleep 1000 & echo $! > \"$PIDFILE\"; wait"],
    )
    .env("PIDFILE", &pid_file)
    .spawn()
    .expect("start lockrun");
    let grandchild = read_pid(&pid_file);
    let pid = holder.id().to_string();
    signal(&pid, "-STOP");
    let frozen = Instant::now();
    // The lease is 1 s from the last renewal; the group must be gone by then.
    while alive(&grandchild) && frozen.elapsed() < Duration::from_millis(1000) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped_in = frozen.elapsed();
    let grandchild_alive = alive(&grandchild);
    std::thread::sleep(Duration::from_millis(500));
    // Another lockrun takes the lock the frozen one still believes it holds.
    let taken = lockrun(&url, "frozen", &["--wait", "5s"], &["true"])
        .output()
        .expect("second lockrun");
    signal(&pid, "-CONT");
    let status = holder.wait().expect("lockrun exits");
    signal(&grandchild, "-KILL");
    assert!(
        !grandchild_alive,
        "the grandchild still ran 1 s into the freeze, past the lease"
    );
    assert_eq!(
        taken.status.code(),
        Some(0),
        "another lockrun could not take the lock"
    );
    assert_eq!(
        status.code(),
        Some(76),
        "lockrun's status after the hold ended under it"
    );
    eprintln!("group stopped {stopped_in:?} into the freeze");
}

/// lockrun frozen the moment it starts its supervisor, before it could tell the supervisor
/// anything: the command still runs under the hold's deadline, and its whole group is gone
/// before the 1 s lease ends.
#[test]
fn a_lockrun_frozen_as_it_starts_the_command_still_has_it_stopped_before_the_lease_ends() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let pid_file = dir.path().join("grandchild");
    let mut holder = lockrun(
        &url,
        "frozen-at-start",
        &["--lease", "1s", "--grace", "200ms"],
        &["sh", "-c", "sleep 1000 & echo $! > \"$PIDFILE\"; wait"],
    )
    .env("PIDFILE", &pid_file)
    .spawn()
    .expect("start lockrun");
    let pid = holder.id().to_string();
    let _supervisor = first_child(holder.id());
    signal(&pid, "-STOP");
    let frozen = Instant::now();
    let grandchild = read_pid(&pid_file);
    while alive(&grandchild) && frozen.elapsed() < Duration::from_millis(1000) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let grandchild_alive = alive(&grandchild);
    signal(&pid, "-CONT");
    let status = holder.wait().expect("lockrun exits");
    signal(&grandchild, "-KILL");
    assert!(
        !grandchild_alive,
        "the grandchild still ran 1 s into a freeze that began as the command started"
    );
    assert_eq!(status.code(), Some(76), "lockrun's status after the freeze");
}

/// A command that leaves a grandchild behind when it exits: the grandchild is stopped before
/// lockrun releases the lock.
#[test]
fn grandchildren_left_behind_are_stopped_before_the_release() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let pid_file = dir.path().join("left-behind");
    let status = lockrun(
        &url,
        "left-behind",
        &[],
        &["sh", "-c", "sleep 1000 & echo $! > \"$PIDFILE\"; exit 3"],
    )
    .env("PIDFILE", &pid_file)
    .status()
    .expect("run lockrun");
    let grandchild = read_pid(&pid_file);
    let left = alive(&grandchild);
    signal(&grandchild, "-KILL");
    assert_eq!(status.code(), Some(3), "the command's status");
    assert!(!left, "a grandchild outlived the command's hold");
}

/// A grace period longer than the at-risk margin is refused before anything runs.
#[test]
fn a_grace_longer_than_the_margin_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("ran");
    let output = lockrun(
        &sqlite_url(dir.path()),
        "grace",
        &["--lease", "3s", "--grace", "2s"],
        &["touch", &marker.display().to_string()],
    )
    .output()
    .expect("run lockrun");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(64), "{stderr}");
    assert!(
        stderr.contains("--grace") && stderr.contains("margin"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the command ran");
}
