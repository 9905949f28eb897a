//! lockrun leaves nothing behind in the temporary directory, whichever way it ends: the
//! supervisor's control socket directory is removed as soon as the supervisor is connected,
//! so not even a lockrun killed with SIGKILL leaves it.

use std::path::Path;

mod support;

use support::{lockrun, read_pid, signal, sqlite_url};

fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .expect("read the temp dir")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("lockrun-"))
        .collect()
}

#[test]
fn finished_and_killed_runs_leave_no_control_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let url = sqlite_url(dir.path());
    for (command, code) in [(&["true"][..], 0), (&["sh", "-c", "exit 7"][..], 7)] {
        let status = lockrun(&url, "leftovers", &[], command)
            .env("TMPDIR", &tmp)
            .status()
            .expect("run lockrun");
        assert_eq!(status.code(), Some(code), "{command:?}");
        assert_eq!(leftovers(&tmp), Vec::<String>::new(), "after {command:?}");
    }
    let pid_file = dir.path().join("pid");
    let mut running = lockrun(
        &url,
        "leftovers",
        &[],
        &["sh", "-c", "echo $$ > \"$PIDFILE\"; exec sleep 30"],
    )
    .env("TMPDIR", &tmp)
    .env("PIDFILE", &pid_file)
    .spawn()
    .expect("run lockrun");
    let command = read_pid(&pid_file);
    signal(&running.id().to_string(), "-KILL");
    let _ = running.wait();
    signal(&command, "-KILL");
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "after SIGKILL");
}
