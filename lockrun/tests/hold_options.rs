//! The run mode's `--max-hold` and `--owner-label`: they reach the hold, and bad values are
//! refused before anything runs.

use std::process::Stdio;
use std::time::{Duration, Instant};

use lock_testkit::scaled;

mod support;

use support::{alive, lockrun, read_pid, signal, sqlite_url};

/// A 30 s command under a 2 s max hold (3 s lease): it is stopped before the hold ends, lockrun
/// exits 76, and the lock is free again at once.
#[test]
fn a_max_hold_stops_the_command_before_the_hold_reaches_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let pid_file = dir.path().join("pid");
    let started = Instant::now();
    let output = lockrun(
        &url,
        "max-hold",
        &["--lease", "3s", "--max-hold", "2s"],
        &["sh", "-c", "echo $$ > \"$PIDFILE\"; exec sleep 30"],
    )
    .env("PIDFILE", &pid_file)
    .stderr(Stdio::piped())
    .output()
    .expect("run lockrun");
    let took = started.elapsed();
    let pid = read_pid(&pid_file);
    let command_alive = alive(&pid);
    signal(&pid, "-KILL");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(76), "{stderr}");
    assert!(!command_alive, "the command outlived its max hold");
    assert!(took < scaled(Duration::from_secs(10)), "ran for {took:?}");
    let next = lockrun(&url, "max-hold", &["--wait", "0s"], &["true"])
        .output()
        .expect("run lockrun");
    assert_eq!(
        next.status.code(),
        Some(0),
        "the lock stayed held: {next:?}"
    );
}

#[test]
fn invalid_max_holds_and_owner_labels_are_refused_with_the_usage_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let marker = dir.path().join("ran");
    let touch = ["touch", marker.to_str().expect("a UTF-8 path")];
    let long_label = "x".repeat(129);
    let cases: [&[&str]; 4] = [
        &["--max-hold", "10ms"],
        &["--max-hold", "soon"],
        &["--owner-label", "two\nlines"],
        &["--owner-label", &long_label],
    ];
    for extra in cases {
        let output = lockrun(&url, "refused", extra, &touch)
            .output()
            .expect("run lockrun");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(64), "{extra:?}: {stderr}");
        assert!(!marker.exists(), "the command ran with {extra:?}");
    }
}
