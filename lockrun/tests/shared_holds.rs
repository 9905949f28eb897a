//! `--permits N`, `--read` and `--write`: commands run under a semaphore permit or a
//! read-write hold on a real Redis server, as their overlaps show.

use std::path::Path;
use std::process::{Child, Stdio};

use lock_testkit::require;
use lock_testkit::servers::RedisServer;

mod support;

use support::{lockrun, sqlite_url};

/// A command that appends `START END` (ns since the epoch) of its own run to `journal`.
const TIMED: &str = "s=$(date +%s%N); sleep 0.4; echo \"$s $(date +%s%N)\" >> \"$JOURNAL\"";

fn start(url: &str, name: &str, extra: &[&str], journal: &Path) -> Child {
    lockrun(url, name, extra, &["sh", "-c", TIMED])
        .env("JOURNAL", journal)
        .stderr(Stdio::null())
        .spawn()
        .expect("start lockrun")
}

fn finish(children: Vec<Child>) {
    for mut child in children {
        let status = child.wait().expect("wait for lockrun");
        assert!(status.success(), "a lockrun failed: {status}");
    }
}

/// The runs in `journal`, as (start, end) pairs.
fn runs(journal: &Path) -> Vec<(u128, u128)> {
    let text = std::fs::read_to_string(journal).expect("read the journal");
    text.lines()
        .map(|line| {
            let (start, end) = line.split_once(' ').expect("START END");
            (start.parse().expect("start"), end.parse().expect("end"))
        })
        .collect()
}

/// The most runs that were under way at one instant.
fn peak(runs: &[(u128, u128)]) -> usize {
    runs.iter()
        .map(|(start, _)| runs.iter().filter(|(s, e)| s <= start && start < e).count())
        .max()
        .unwrap_or(0)
}

#[test]
fn permits_let_at_most_n_commands_run_at_once() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let journal = dir.path().join("journal");
    let children = (0..5)
        .map(|_| start(&server.url(), "exports", &["--permits", "2"], &journal))
        .collect();
    finish(children);
    let runs = runs(&journal);
    assert_eq!(runs.len(), 5);
    assert_eq!(peak(&runs), 2, "runs: {runs:?}");
}

#[test]
fn readers_run_together_and_a_writer_runs_alone() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (reads, writes) = (dir.path().join("reads"), dir.path().join("writes"));
    let mut children: Vec<Child> = (0..3)
        .map(|_| start(&server.url(), "snapshot", &["--read"], &reads))
        .collect();
    children.push(start(&server.url(), "snapshot", &["--write"], &writes));
    children.extend((0..2).map(|_| start(&server.url(), "snapshot", &["--read"], &reads)));
    finish(children);
    let (reads, writes) = (runs(&reads), runs(&writes));
    assert!(peak(&reads) >= 2, "readers never ran together: {reads:?}");
    let [(write_start, write_end)] = writes[..] else {
        panic!("one write run expected: {writes:?}");
    };
    for (start, end) in &reads {
        assert!(
            *end <= write_start || *start >= write_end,
            "a read ran beside the write: {start}..{end} and {write_start}..{write_end}"
        );
    }
}

#[test]
fn bad_or_unsupported_shared_holds_are_refused_before_the_command_runs() {
    let masters: Option<Vec<RedisServer>> = (0..3).map(|_| require(RedisServer::start())).collect();
    let Some(masters) = masters else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = sqlite_url(dir.path());
    // A Redlock (several hosts) has no semaphores or read-write locks: the backend says so.
    let urls: Vec<String> = masters.iter().map(RedisServer::url).collect();
    let redlock = urls.join(",");
    let marker = dir.path().join("ran");
    let touch = ["touch", marker.to_str().expect("a UTF-8 path")];
    let cases: [(&str, &[&str], i32); 5] = [
        (&sqlite, &["--permits", "0"], 64),
        (&sqlite, &["--read", "--write"], 64),
        (&sqlite, &["--permits", "2", "--read"], 64),
        (&redlock, &["--permits", "2"], 70),
        (&redlock, &["--read"], 70),
    ];
    for (url, extra, code) in cases {
        let output = lockrun(url, "refused", extra, &touch)
            .output()
            .expect("run lockrun");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{extra:?}: {stderr}");
        assert!(!marker.exists(), "the command ran with {extra:?}");
    }
}
