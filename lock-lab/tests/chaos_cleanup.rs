//! The chaos runner leaves nothing behind a cell that could disturb the next one: the servers
//! with a faked clock (ahead of the machine's for good) stop when the clock-step cell ends.

use lock_lab::chaos::{Backend, LIBFAKETIME, Runner, Scenario};

/// The processes of this test that run with libfaketime preloaded.
fn faked_processes() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|byte| *byte == 0)
                    .any(|var| var == format!("LD_PRELOAD={LIBFAKETIME}").as_bytes())
            })
        })
        .filter(|pid| descends_from_us(*pid))
        .collect()
}

/// Whether `pid` is a descendant of this test process.
fn descends_from_us(mut pid: u32) -> bool {
    let us = std::process::id();
    for _ in 0..64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // The parent is the second field after the parenthesised command.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        match parent {
            Some(parent) if parent == us => return true,
            Some(parent) if parent > 1 => pid = parent,
            _ => return false,
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_with_a_faked_clock_stop_with_their_cell() {
    let mut runner = Runner::new(env!("CARGO_BIN_EXE_lock-holder").into(), None);
    let cell = runner
        .run_cell(Scenario::ServerClockStep, Backend::Zookeeper, 1)
        .await;
    if !cell.errors.is_empty() {
        assert!(!lock_testkit::servers_required(), "{:?}", cell.errors);
        eprintln!("SKIPPED: {:?} (run scripts/install-servers)", cell.errors);
        return;
    }
    let left = faked_processes();
    assert!(
        left.is_empty(),
        "faked-clock servers still running after their cell: {left:?}"
    );
}
