//! `lockrun` as users run it: separate processes sharing one SQLite file.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use distlock::DistributedLockExt;
use lock_testkit::scaled;

fn lockrun(url: &str, name: &str, extra: &[&str], command: &[&str]) -> Command {
    let mut lockrun = Command::new(env!("CARGO_BIN_EXE_lockrun"));
    lockrun
        .args(["--url", url, "--name", name])
        .args(extra)
        .arg("--")
        .args(command);
    lockrun
}

fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("locks.db").display())
}

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

#[test]
fn a_lost_lock_terminates_the_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let pid_file = dir.path().join("child.pid");
    let mut holder = lockrun(
        &url,
        "lockrun/lost",
        &["--lease", "1s", "--grace", "200ms"],
        &["sh", "-c", "echo $$ > \"$PIDFILE\"; exec sleep 60"],
    )
    .env("PIDFILE", &pid_file)
    .spawn()
    .expect("start lockrun");
    let deadline = Instant::now() + scaled(Duration::from_secs(10));
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap_or_default()
            .trim()
            .is_empty()
    {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let child_pid = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .to_owned();
    // Freeze lockrun (not its command) past its lease, so its renewals stop, as a stalled host's would.
    let pid = holder.id().to_string();
    Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .expect("SIGSTOP");
    std::thread::sleep(Duration::from_millis(2500));
    let taken = Command::new(env!("CARGO_BIN_EXE_lockrun"))
        .args([
            "--url",
            &url,
            "--name",
            "lockrun/lost",
            "--wait",
            "5s",
            "--",
            "true",
        ])
        .output();
    Command::new("kill")
        .args(["-CONT", &pid])
        .status()
        .expect("SIGCONT");
    assert_eq!(
        taken.expect("second lockrun").status.code(),
        Some(0),
        "another process could not take the expired lock"
    );
    let status = wait_with_limit(&mut holder, scaled(Duration::from_secs(10)))
        .expect("lockrun did not stop after losing the lock");
    assert_eq!(
        status.code(),
        Some(76),
        "lockrun's status after losing the lock"
    );
    assert!(
        !Path::new(&format!("/proc/{child_pid}")).exists(),
        "the command still runs after the lock was lost"
    );
}

fn wait_with_limit(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
