//! What the Curator interop tests share: a Curator program in a JVM, a server and service to
//! meet it on, and line-by-line talk with the running program.

#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use lock_core::LockName;
use lock_lab::curator::CuratorProgram;
use lock_testkit::servers::ZkServer;
use lock_testkit::{require, scaled_ms};
use lock_zk::ZkLock;

/// A Curator program in a JVM, compiled from `java/<class>.java`.
pub(crate) struct Curator(CuratorProgram);

impl Curator {
    /// Compiles `java/<class>.java`; `None` (a loud skip) when Java or Curator is missing and
    /// `LOCK_TEST_REQUIRE` is unset.
    pub(crate) fn compile(class: &str) -> Option<Self> {
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("java/{class}.java"));
        require(CuratorProgram::compile(&source)).map(Self)
    }

    /// `java <class> ARGS...` with piped stdin and stdout.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = self.0.command("256m");
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        command
    }
}

/// A name no other case uses.
pub(crate) fn unique(case: &str) -> LockName {
    LockName::new(format!("curator/{case}/{:016x}", rand::random::<u64>())).expect("valid name")
}

/// A server, a connected service and the Curator program `class`; `None` skips.
pub(crate) async fn setup(class: &str) -> Option<(ZkServer, ZkLock, Curator)> {
    let server = require(ZkServer::start())?;
    let curator = Curator::compile(class)?;
    let lock = ZkLock::builder(&server.url())
        .connect()
        .await
        .expect("connect");
    Some((server, lock, curator))
}

/// The lines a Curator program prints, read as they come by a thread of their own.
pub(crate) struct Lines(std::sync::mpsc::Receiver<String>);

impl Lines {
    /// Every line still to come, until the program closes its output.
    pub(crate) fn rest(self) -> Vec<String> {
        self.0.into_iter().collect()
    }
}

/// The next line the Curator program prints within `limit`; `None` when it prints none.
pub(crate) fn line_within(lines: &mut Lines, limit: Duration) -> Option<String> {
    lines.0.recv_timeout(limit).ok()
}

/// The next line the Curator program prints, within `limit`.
pub(crate) fn next_line(lines: &mut Lines, limit: Duration) -> String {
    line_within(lines, limit).expect("Curator program went silent")
}

/// Starts the program with `args`.
pub(crate) fn start(curator: &Curator, args: &[&str]) -> (Child, Lines) {
    let mut child = curator.command(args).spawn().expect("start java");
    let stdout = child.stdout.take().map(BufReader::new);
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Some(stdout) = stdout else {
            return;
        };
        for line in stdout.lines() {
            let Ok(line) = line else {
                return;
            };
            if sender.send(line.trim().to_owned()).is_err() {
                return;
            }
        }
    });
    (child, Lines(receiver))
}

/// The connect string of a `zk://` URL.
pub(crate) fn hosts(url: &str) -> String {
    url.trim_start_matches("zk://").to_owned()
}

/// Tells a `hold` program to release, and waits until it has.
pub(crate) fn release(java: &mut Child, lines: &mut Lines) {
    send(java, "release");
    assert_eq!(next_line(lines, scaled_ms(10_000)), "released");
}

/// Writes `line` to the program's stdin.
pub(crate) fn send(java: &mut Child, line: &str) {
    let stdin = java.stdin.as_mut().expect("stdin");
    stdin
        .write_all(format!("{line}\n").as_bytes())
        .expect("write to the Curator program");
}
