//! `lockrun` as users run it: separate processes sharing one SQLite file.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use distlock::DistributedLockExt;
use lock_testkit::scaled;

mod support;

use support::{lockrun, sqlite_url};

/// A shell command that notes an overlap if another instance is inside, then appends its token.
const CRITICAL: &str = r#"set -C; if ! : > "$MARKER"; then echo overlap >> "$LOG"; fi; sleep 0.05; rm -f "$MARKER"; echo "token $LOCK_FENCING_TOKEN" >> "$LOG""#;

#[test]
fn two_lockruns_on_one_sqlite_file_never_run_together() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (url, log, marker) = (
        sqlite_url(dir.path()),
        dir.path().join("log"),
        dir.path().join("marker"),
    );
    let contender = |rounds: usize| {
        let (url, log, marker) = (url.clone(), log.clone(), marker.clone());
        std::thread::spawn(move || {
            for _ in 0..rounds {
                let status = lockrun(&url, "lockrun/exclusive", &[], &["sh", "-c", CRITICAL])
                    .env("LOG", &log)
                    .env("MARKER", &marker)
                    .status()
                    .expect("run lockrun");
                assert!(status.success(), "lockrun failed: {status}");
            }
        })
    };
    let (a, b) = (contender(10), contender(10));
    a.join().expect("first contender");
    b.join().expect("second contender");
    let log = std::fs::read_to_string(&log).expect("log");
    assert!(!log.contains("overlap"), "two commands ran at once:\n{log}");
    let mut tokens: Vec<u64> = log
        .lines()
        .filter_map(|l| l.strip_prefix("token ")?.parse().ok())
        .collect();
    assert_eq!(tokens.len(), 20, "{log}");
    let in_order = tokens.clone();
    tokens.dedup();
    assert!(
        in_order.windows(2).all(|pair| pair[0] < pair[1]),
        "tokens not increasing in run order: {in_order:?}"
    );
}

#[test]
fn the_commands_exit_status_passes_through() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let status = lockrun(&url, "lockrun/status", &[], &["sh", "-c", "exit 7"])
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(7));
    let status = lockrun(&url, "lockrun/status", &[], &["true"])
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(0));
    let status = lockrun(&url, "lockrun/status", &[], &["/nonexistent/command"])
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(127));
}

#[test]
fn bad_arguments_exit_with_the_usage_code() {
    let output = Command::new(env!("CARGO_BIN_EXE_lockrun"))
        .args(["--url", "nonsense://x", "--name", "n", "--", "true"])
        .output();
    let output = output.expect("run");
    assert_eq!(
        output.status.code(),
        Some(64),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown scheme"));
    let help = Command::new(env!("CARGO_BIN_EXE_lockrun"))
        .arg("--help")
        .output()
        .expect("help");
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("EXAMPLES"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_with_a_short_wait_exits_with_the_timeout_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let locks = distlock::connect(&url).await.expect("connect");
    let held = locks.acquire("lockrun/held").await.expect("hold");
    let started = Instant::now();
    let output = tokio::task::spawn_blocking(move || {
        lockrun(&url, "lockrun/held", &["--wait", "1s"], &["echo", "ran"])
            .stderr(Stdio::piped())
            .output()
    })
    .await
    .expect("join")
    .expect("run");
    assert_eq!(
        output.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stdout.is_empty(), "the command ran without the lock");
    assert!(
        started.elapsed() < scaled(Duration::from_secs(10)),
        "gave up after {:?}",
        started.elapsed()
    );
    held.release().await.expect("release");
}
