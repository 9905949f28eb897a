//! Waiting until a stop signal has taken effect. The kernel wakes one thread of a process
//! for SIGSTOP; that thread, once it runs, stops the others. Until then the process still
//! serves, so a pause that returned at the signal would let a probe right after it be answered.

use std::io;
use std::time::{Duration, Instant};

/// Waits until every thread of every process in `pids` is stopped (or gone), failing with
/// `TimedOut` after `limit`.
pub(super) fn wait_stopped(pids: &[u32], limit: Duration) -> io::Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        let running: Vec<u32> = pids.iter().copied().filter(|pid| !stopped(*pid)).collect();
        if running.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("processes {running:?} still run {limit:?} after SIGSTOP"),
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether no thread of `pid` can run: each is stopped, traced, dead, or the process is gone.
fn stopped(pid: u32) -> bool {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    threads.flatten().all(|thread| {
        std::fs::read_to_string(thread.path().join("stat"))
            .ok()
            .and_then(|text| state_of(&text))
            .is_none_or(|state| matches!(state, 'T' | 't' | 'Z' | 'X'))
    })
}

/// The state letter of a `stat` line, after the command name (which may hold spaces).
fn state_of(stat: &str) -> Option<char> {
    stat.get(stat.rfind(')')? + 1..)?
        .trim_start()
        .chars()
        .next()
}

#[cfg(test)]
mod tests {
    use super::state_of;

    #[test]
    fn the_state_is_read_after_a_command_name_with_spaces_and_parentheses() {
        assert_eq!(state_of("42 (a (b) c) T 1 42 42"), Some('T'));
        assert_eq!(state_of("42 (java) R 1 42"), Some('R'));
        assert_eq!(state_of("42 (java"), None);
    }

    #[test]
    fn a_process_that_is_gone_counts_as_stopped() {
        assert!(super::wait_stopped(&[u32::MAX], std::time::Duration::ZERO).is_ok());
    }

    #[test]
    fn a_running_process_is_not_stopped() {
        let error =
            super::wait_stopped(&[std::process::id()], std::time::Duration::from_millis(20))
                .expect_err("this test process runs");
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    }
}
