//! Each server's temporary directory, and the removal of those whose test process is gone.
//!
//! A server shared by a whole test binary lives in a static, which Rust never drops, so its
//! directory (a MariaDB data directory is over 100 MB) outlives the binary. Each directory
//! records the pid of the process that made it; making a new one removes those of processes
//! that no longer run.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::process::alive;
use crate::ServerError;

/// The file in each server directory that names the test process it belongs to.
const OWNER: &str = "owner.pid";

/// A temporary directory for one server, readable by other users (servers may drop
/// privileges), after removing the directories of `server` whose test process is gone.
pub(crate) fn server_dir(server: &'static str) -> Result<tempfile::TempDir, ServerError> {
    let failed = |what: &str, error: std::io::Error| ServerError::Failed {
        server,
        reason: format!("{what}: {error}"),
    };
    let prefix = format!("distlock-{server}-");
    remove_orphans(&std::env::temp_dir(), &prefix);
    let dir = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir()
        .map_err(|error| failed("temp dir", error))?;
    std::fs::write(dir.path().join(OWNER), std::process::id().to_string())
        .map_err(|error| failed("owner file", error))?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
        .map_err(|error| failed("chmod temp dir", error))?;
    Ok(dir)
}

/// Removes every directory in `parent` named `prefix...` whose owner process no longer runs.
/// Directories without an owner file are left alone: nothing says whose they are.
fn remove_orphans(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let named = entry.file_name().to_string_lossy().starts_with(prefix);
        let owner = std::fs::read_to_string(entry.path().join(OWNER)).ok();
        let owner = owner.and_then(|text| text.trim().parse::<u32>().ok());
        if named && owner.is_some_and(|pid| !alive(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_server_dir_removes_those_of_finished_test_processes_only() {
        let mut finished = std::process::Command::new("true").spawn().expect("spawn");
        let gone = finished.id();
        finished.wait().expect("wait");
        let orphan = server_dir("sweep-check").expect("dir").keep();
        std::fs::write(orphan.join(OWNER), gone.to_string()).expect("owner");
        let unowned = tempfile::Builder::new()
            .prefix("distlock-sweep-check-")
            .tempdir();
        let unowned = unowned.expect("dir");
        let live = server_dir("sweep-check").expect("dir");
        assert!(!orphan.exists(), "the finished process's directory stayed");
        assert!(
            unowned.path().exists(),
            "a directory of unknown owner was removed"
        );
        let next = server_dir("sweep-check").expect("dir");
        assert!(
            live.path().exists(),
            "a live process's directory was removed"
        );
        drop((live, next));
    }
}
