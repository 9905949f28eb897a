//! `--elect NAME`: the command runs only while its lockrun leads, sees its epoch, and is
//! stopped before the leadership can pass on; `lockrun leader` shows who leads.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod support;

use support::{admin_command, alive, lockrun_admin, read_pid, read_written, signal, sqlite_url};

/// `lockrun --url URL --elect NAME --value VALUE EXTRA... -- COMMAND...`.
fn elect(url: &str, name: &str, value: &str, extra: &[&str], command: &[&str]) -> Command {
    let mut lockrun = admin_command(&["--url", url, "--elect", name, "--value", value]);
    lockrun.args(extra).arg("--").args(command);
    lockrun
}

/// A command that writes `LOCK_EPOCH LOCK_FENCING_TOKEN` to `$OUT`, then runs until `$STOP`
/// exists.
const LEAD: &str = r#"echo "$LOCK_EPOCH $LOCK_FENCING_TOKEN" > "$OUT"
while [ ! -e "$STOP" ]; do sleep 0.05; done"#;

/// `lockrun leader NAME --json`: its exit status and the JSON it printed.
fn leader(url: &str, name: &str) -> (Option<i32>, Value) {
    let output = lockrun_admin(&["leader", "--url", url, name, "--json"]);
    let json = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    (output.status.code(), json)
}

/// The epoch a `LEAD` command wrote, checked to be its fencing token too.
fn epoch_in(out: &Path) -> u64 {
    let written = read_written(out);
    let (epoch, token) = written.split_once(' ').expect("epoch and token");
    assert_eq!(epoch, token, "LOCK_EPOCH is not the fencing token");
    epoch.parse().expect("an epoch")
}

#[test]
fn the_leader_runs_with_its_epoch_and_a_follower_runs_only_after_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let files = |who: &str| (dir.path().join(format!("{who}.out")), dir.path().join(who));
    let start = |who: &str| {
        let (out, stop) = files(who);
        elect(&url, "scheduler", who, &[], &["sh", "-c", LEAD])
            .env("OUT", out)
            .env("STOP", stop)
            .stderr(Stdio::null())
            .spawn()
            .expect("start lockrun")
    };
    let mut first = start("10.0.0.1:80");
    let first_epoch = epoch_in(&files("10.0.0.1:80").0);
    let (status, shown) = leader(&url, "scheduler");
    assert_eq!(status, Some(0), "{shown}");
    assert_eq!(shown["leader"]["value"], "10.0.0.1:80");
    assert_eq!(shown["leader"]["epoch"], first_epoch);
    let mut second = start("10.0.0.2:80");
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        !files("10.0.0.2:80").0.exists(),
        "a follower's command ran while another lockrun led"
    );
    std::fs::write(files("10.0.0.1:80").1, "").expect("stop the leader's command");
    assert!(first.wait().expect("the leader exits").success());
    let second_epoch = epoch_in(&files("10.0.0.2:80").0);
    assert!(second_epoch > first_epoch, "the epoch did not rise");
    let (_, shown) = leader(&url, "scheduler");
    assert_eq!(shown["leader"]["value"], "10.0.0.2:80");
    std::fs::write(files("10.0.0.2:80").1, "").expect("stop the second command");
    assert!(second.wait().expect("the second exits").success());
    let (status, shown) = leader(&url, "scheduler");
    assert_eq!(
        (status, &shown["leader"]),
        (Some(3), &Value::Null),
        "{shown}"
    );
    let text = lockrun_admin(&["leader", "--url", &url, "scheduler"]);
    assert_eq!(text.status.code(), Some(3));
    let said = String::from_utf8_lossy(&text.stderr);
    assert!(said.contains("nobody leads scheduler"), "{said}");
}

/// A frozen leader's command is stopped before its 1 s lease ends, and another candidate
/// leads after that; the frozen lockrun, resumed, reports the loss.
#[test]
fn a_frozen_leader_has_its_command_stopped_before_another_leads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let pid_file = dir.path().join("pid");
    let mut frozen = elect(
        &url,
        "frozen",
        "a",
        &["--lease", "1s", "--grace", "200ms"],
        &["sh", "-c", "echo $$ > \"$PIDFILE\"; exec sleep 1000"],
    )
    .env("PIDFILE", &pid_file)
    .stderr(Stdio::null())
    .spawn()
    .expect("start lockrun");
    let command = read_pid(&pid_file);
    let pid = frozen.id().to_string();
    signal(&pid, "-STOP");
    let since = Instant::now();
    while alive(&command) && since.elapsed() < Duration::from_millis(1000) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let command_alive = alive(&command);
    let next = elect(&url, "frozen", "b", &["--wait", "5s"], &["true"])
        .output()
        .expect("second lockrun");
    signal(&pid, "-CONT");
    let status = frozen.wait().expect("lockrun exits");
    signal(&command, "-KILL");
    assert!(
        !command_alive,
        "the command still ran 1 s into the freeze, past the lease"
    );
    assert_eq!(next.status.code(), Some(0), "another candidate never led");
    assert_eq!(status.code(), Some(76), "the frozen leader's status");
}

#[test]
fn election_flags_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let marker = dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    for args in [
        vec!["--elect", "x", "--name", "y"],
        vec!["--elect", "x", "--permits", "2"],
        vec!["--name", "y", "--value", "v"],
        vec!["--elect", "x", "--value", ""],
        vec!["--elect", "x", "--value", "v", "--owner-label", "w"],
    ] {
        let output = admin_command(&["--url", &url])
            .args(&args)
            .args(["--", "sh", "-c", &touch])
            .output()
            .expect("run lockrun");
        assert_eq!(output.status.code(), Some(64), "{args:?}");
    }
    assert!(!marker.exists(), "a command ran despite bad flags");
}
