//! What the tests of `status`, `list` and `break` share: a lockrun holding a lock, and the
//! subcommands' output.

use std::path::Path;
use std::process::{Child, Output, Stdio};

use serde_json::Value;

use super::{lockrun, read_written};

/// A command that writes its fencing token and its pid, then runs until stopped.
const HOLD: &str = r#"echo "$LOCK_FENCING_TOKEN $$" > "$OUT"; exec sleep 60"#;

/// A lockrun holding a lock while its command sleeps; killed when dropped.
pub struct Holder {
    lockrun: Option<Child>,
    /// The hold's fencing token.
    pub token: u64,
    /// The command's pid.
    pub pid: String,
}

impl Holder {
    /// Starts a lockrun holding `name` on `url` with a 3 s lease and owner label `label`,
    /// and waits until its command runs (writing to a file in `dir`).
    pub fn start(url: &str, name: &str, label: &str, dir: &Path) -> Self {
        let out = dir.join(format!("{}.out", name.replace('/', "_")));
        let args = ["--lease", "3s", "--owner-label", label];
        let lockrun = lockrun(url, name, &args, &["sh", "-c", HOLD])
            .env("OUT", &out)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the holding lockrun");
        let written = read_written(&out);
        let (token, pid) = written.split_once(' ').expect("token and pid");
        Self {
            lockrun: Some(lockrun),
            token: token.parse().expect("a token"),
            pid: pid.to_owned(),
        }
    }

    /// Waits for the holding lockrun to exit.
    pub fn wait(&mut self) -> Output {
        let lockrun = self.lockrun.take().expect("still running");
        lockrun.wait_with_output().expect("wait for lockrun")
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        // lockrun's supervisor stops the command when lockrun dies.
        if let Some(mut lockrun) = self.lockrun.take() {
            let _ = lockrun.kill();
            let _ = lockrun.wait();
        }
    }
}

/// What a process wrote to stdout.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Status, stdout and stderr, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "{:?}\nstdout: {}\nstderr: {}",
        output.status,
        stdout(output),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Stdout parsed as JSON.
pub fn parsed(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", describe(output)))
}
