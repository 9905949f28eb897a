//! `pause` returns only once the server has stopped: every thread of every process in its
//! group. A stop signal is delivered to one thread first, and the others stop when that thread
//! gets to run; a test that probes the server right after `pause` must not meet a thread that
//! still serves.

use lock_testkit::require;
use lock_testkit::servers::ZkServer;

/// The state letter of every thread of every process whose process group is `group`.
fn thread_states(group: u32) -> Vec<(u32, String)> {
    let mut states = Vec::new();
    let processes = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    for process in processes {
        let Some(pid) = process
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if stat_fields(&format!("/proc/{pid}/stat")).and_then(|f| f.get(2).cloned())
            != Some(group.to_string())
        {
            continue;
        }
        let threads = std::fs::read_dir(format!("/proc/{pid}/task"));
        for thread in threads.into_iter().flatten().flatten() {
            let path = thread.path().join("stat");
            if let Some(fields) = stat_fields(&path.to_string_lossy()) {
                let tid = thread.file_name().to_string_lossy().parse().unwrap_or(0);
                states.push((tid, fields[0].clone()));
            }
        }
    }
    states
}

/// The fields of a `stat` file after the command name: state, parent, process group, ...
fn stat_fields(path: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let rest = text.get(text.rfind(')')? + 1..)?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

#[test]
fn a_paused_zookeeper_has_no_thread_left_running() {
    let Some(mut server) = require(ZkServer::start()) else {
        return;
    };
    let group = server.process().pid().expect("a started server has a pid");
    for round in 0..40 {
        server.process().pause().expect("pause");
        let states = thread_states(group);
        assert!(states.len() > 1, "the JVM runs more than one thread");
        let running: Vec<_> = states
            .iter()
            .filter(|(_, state)| !matches!(state.as_str(), "T" | "t" | "Z" | "X"))
            .collect();
        assert!(
            running.is_empty(),
            "round {round}: pause returned with {} of {} threads not stopped: {running:?}",
            running.len(),
            states.len()
        );
        server.process().resume().expect("resume");
    }
}
