//! A supervised server process: started in its own process group, watched so it dies with the
//! test process, and controllable (kill, pause, resume, restart).

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::stopped;
use crate::ServerError;

/// How to start one server process, kept so it can be started again on the same port and data.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) server: &'static str,
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) log: PathBuf,
    /// Run as this (uid, gid) when started as root (PostgreSQL refuses to run as root).
    pub(crate) user: Option<(u32, u32)>,
    /// Extra environment variables (for example `LD_PRELOAD` of a clock-faking library).
    pub(crate) env: Vec<(String, String)>,
}

/// A running server process. Killed (with its whole process group) on drop; a watchdog kills it
/// too if the test process dies first.
#[derive(Debug)]
pub struct ServerProcess {
    launch: Launch,
    child: Option<Child>,
    watchdog: Option<Child>,
}

impl ServerProcess {
    pub(crate) fn spawn(launch: Launch) -> Result<Self, ServerError> {
        let mut process = Self {
            launch,
            child: None,
            watchdog: None,
        };
        process.start()?;
        Ok(process)
    }

    fn start(&mut self) -> Result<(), ServerError> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.launch.log)
            .map_err(|error| {
                self.failed(format!(
                    "cannot open log {}: {error}",
                    self.launch.log.display()
                ))
            })?;
        let log_err = log
            .try_clone()
            .map_err(|error| self.failed(error.to_string()))?;
        let mut command = Command::new(&self.launch.program);
        command
            .args(&self.launch.args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .envs(self.launch.env.iter().map(|(key, value)| (key, value)))
            .process_group(0);
        if let Some((uid, gid)) = self.launch.user {
            command.uid(uid).gid(gid);
        }
        let child = command
            .spawn()
            .map_err(|error| self.failed(format!("spawn {:?}: {error}", self.launch.program)))?;
        // The watchdog runs in a process group of its own and ignores the signals a terminal or
        // a supervisor sends a whole group (Ctrl-C, `timeout`, a CI runner's cancel): they stop
        // the test process, and the watchdog must outlive it to kill the server.
        // `kill -KILL -PGID`, not `kill -KILL -- -PGID`: dash, Debian's sh, takes `--` for a
        // pid and kills nothing.
        let watchdog = Command::new("sh")
            .arg("-c")
            .arg(concat!(
                "trap '' INT TERM HUP QUIT; ",
                "while kill -0 \"$1\" 2>/dev/null; do sleep 0.5; done; kill -KILL \"-$2\" 2>/dev/null"
            ))
            .arg("watchdog")
            .arg(std::process::id().to_string())
            .arg(child.id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|error| self.failed(format!("spawn watchdog: {error}")))?;
        self.child = Some(child);
        self.watchdog = Some(watchdog);
        Ok(())
    }

    fn failed(&self, reason: String) -> ServerError {
        ServerError::Failed {
            server: self.launch.server,
            reason,
        }
    }

    /// The server's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the server process is alive (a paused process counts as alive).
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Sends `signal` to the server's whole process group and to every descendant process:
    /// PostgreSQL's backends leave the group (`setsid`), so the group alone misses them.
    fn signal(&self, signal: &str) -> std::io::Result<()> {
        let Some(pid) = self.pid() else { return Ok(()) };
        let mut targets = vec![format!("-{pid}")];
        targets.extend(descendants(pid).iter().map(u32::to_string));
        Command::new("kill")
            .arg(format!("-{signal}"))
            .arg("--")
            .args(&targets)
            .stderr(Stdio::null())
            .status()?;
        Ok(())
    }

    /// Kills the server (SIGKILL, whole process group and every descendant) and waits until
    /// they are gone, so a restart finds its port and shared memory free.
    pub fn kill(&mut self) {
        let family = self.pid().map(descendants).unwrap_or_default();
        let _ = self.signal("KILL");
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while family.iter().any(|pid| alive(*pid)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
    }

    /// Pauses the server (SIGSTOP): connections stay open, nothing is answered. Returns once
    /// every thread of the server's processes has stopped, so nothing answers after it.
    ///
    /// # Errors
    ///
    /// When `kill` cannot be run, or a thread still runs 10 s after the signal.
    pub fn pause(&self) -> std::io::Result<()> {
        self.signal("STOP")?;
        let Some(pid) = self.pid() else { return Ok(()) };
        let mut family = descendants(pid);
        family.push(pid);
        stopped::wait_stopped(&family, Duration::from_secs(10))
    }

    /// Resumes a paused server (SIGCONT).
    pub fn resume(&self) -> std::io::Result<()> {
        self.signal("CONT")
    }

    /// Kills the server if it runs and starts it again with the same port and data directory.
    pub(crate) fn restart(&mut self) -> Result<(), ServerError> {
        self.kill();
        self.start()
    }

    /// The log's last lines, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        log_tail(&self.launch.log)
    }

    /// The whole log so far; empty when it cannot be read.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.launch.log).unwrap_or_default()
    }

    /// Waits until `ready` answers true, failing with the log's tail after `limit`.
    pub(crate) fn wait_ready(
        &mut self,
        limit: Duration,
        ready: impl Fn() -> bool,
    ) -> Result<(), ServerError> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if ready() {
                return Ok(());
            }
            if !self.is_running() {
                return Err(
                    self.failed(format!("exited during start-up; log:\n{}", self.log_tail()))
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(self.failed(format!(
            "not ready after {limit:?}; log:\n{}",
            self.log_tail()
        )))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.resume();
        self.kill();
    }
}

/// Every live descendant of `pid`, found through `/proc/*/stat` parent links.
fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|child| Some((child, parent_of(child)?)))
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(child, _) in parents.iter().filter(|(_, p)| *p == parent) {
            found.push(child);
            frontier.push(child);
        }
    }
    found
}

/// The parent pid and whether the process still runs (a zombie does not), from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(u32, bool)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: read after its closing one.
    let mut fields = text.get(text.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((parent, state != "Z" && state != "X"))
}

fn parent_of(pid: u32) -> Option<u32> {
    stat(pid).map(|(parent, _)| parent)
}

pub(crate) fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(_, running)| running)
}

/// The last 30 lines of a log file.
pub(crate) fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// Whether something accepts TCP connections on the loopback `port`.
pub(crate) fn accepts(port: u16) -> bool {
    TcpStream::connect_timeout(
        &SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        Duration::from_millis(200),
    )
    .is_ok()
}

/// Finds `name` on `PATH` or in `extra` directories.
pub fn find_binary(name: &str, extra: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The uid and gid of system user `name` when this process is root and a server must drop to
/// that user; `None` when not root (the server then runs as the current user).
pub(crate) fn run_as(name: &str) -> Result<Option<(u32, u32)>, String> {
    let id = |args: &[&str]| -> Result<String, String> {
        let output = Command::new("id")
            .args(args)
            .output()
            .map_err(|e| format!("id: {e}"))?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    if id(&["-u"])? != "0" {
        return Ok(None);
    }
    let (uid, gid) = (id(&["-u", name])?, id(&["-g", name])?);
    match (uid.parse(), gid.parse()) {
        (Ok(uid), Ok(gid)) => Ok(Some((uid, gid))),
        _ => Err(format!(
            "running as root but there is no `{name}` user; run scripts/install-servers"
        )),
    }
}
