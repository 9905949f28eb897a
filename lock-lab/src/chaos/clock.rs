//! A server whose wall clock a trial can step: libfaketime preloaded with a timestamp file it
//! reads again every second (reading it on every call slows a JVM to a crawl). The monotonic
//! clock is left alone (timers and timeouts behave), only the wall clock a server uses for
//! lease ends and `now()` moves.

use std::path::PathBuf;
use std::time::Duration;

/// Where Debian's `faketime` package puts the library. Preload it directly: the `faketime`
/// wrapper keeps a named semaphore per wrapper pid in /dev/shm, and a leftover one makes a
/// later wrapper with a recycled pid fail to start ("sem_open: File exists").
pub const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// The offset file of one faked clock; removed on drop.
#[derive(Debug)]
pub(crate) struct FakeClock {
    file: PathBuf,
    _dir: tempfile::TempDir,
    offset: Duration,
}

impl FakeClock {
    /// A clock at offset zero; `Err` when libfaketime is not installed.
    pub(crate) fn new() -> Result<Self, String> {
        if !std::path::Path::new(LIBFAKETIME).is_file() {
            return Err(format!(
                "{LIBFAKETIME} is missing: run scripts/install-servers"
            ));
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let file = dir.path().join("offset");
        std::fs::write(&file, "+0\n").map_err(|e| e.to_string())?;
        // Servers may drop privileges: let any user read it.
        use std::os::unix::fs::PermissionsExt;
        let readable = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(dir.path(), readable).map_err(|e| e.to_string())?;
        Ok(Self {
            file,
            _dir: dir,
            offset: Duration::ZERO,
        })
    }

    /// The environment that makes a server process read its wall clock from this file.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        [
            ("LD_PRELOAD", LIBFAKETIME.to_owned()),
            ("FAKETIME_TIMESTAMP_FILE", self.file.display().to_string()),
            ("FAKETIME_CACHE_DURATION", "1".to_owned()),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
            // libfaketime turns its "monotonic fix" on by itself on this glibc; with it, a
            // JVM's timed waits return at once, so every waiting thread spins (a ZooKeeper
            // server takes both cores and starves the clients connecting to it).
            ("FAKETIME_FORCE_MONOTONIC_FIX", "0".to_owned()),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
    }

    /// Steps the wall clock forward by `step`, in whole seconds (offsets only grow: a clock
    /// going back would stretch every lease).
    pub(crate) fn step(&mut self, step: Duration) -> Result<(), String> {
        self.offset += step;
        let offset = format!("+{}\n", self.offset.as_secs());
        std::fs::write(&self.file, offset).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_testkit::require;
    use lock_testkit::servers::ZkServer;

    /// CPU seconds `pid` has used so far (user and system), from `/proc`.
    fn cpu_seconds(pid: u32) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
        // Fields after the command's closing parenthesis; utime and stime are 14th and 15th.
        let (_, rest) = stat.rsplit_once(')').expect("comm");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 =
            fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
        ticks / 100.0
    }

    /// An idle server under the faked clock stays idle: a JVM whose timed waits returned at
    /// once would spin every waiting thread and take both cores of the machine.
    #[test]
    fn an_idle_jvm_under_the_faked_clock_uses_no_cpu() {
        let missing = |_| lock_testkit::ServerError::Missing {
            server: "libfaketime",
            binary: LIBFAKETIME.to_owned(),
        };
        let Some(clock) = require(FakeClock::new().map_err(missing)) else {
            return;
        };
        let tick = Duration::from_millis(200);
        let Some(mut server) = require(ZkServer::start_with_tick_and_env(tick, &clock.env()))
        else {
            return;
        };
        let pid = server.process().pid().expect("pid");
        std::thread::sleep(Duration::from_secs(1));
        let before = cpu_seconds(pid);
        std::thread::sleep(Duration::from_secs(2));
        let used = cpu_seconds(pid) - before;
        assert!(used < 0.5, "an idle server used {used:.2} s of CPU in 2 s");
    }
}
