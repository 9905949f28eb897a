//! A `redis-server` process speaking RESP on one reserved loopback port, as a Redis server or
//! as a Sentinel: started in its own directory, ready once it answers `PING`, restartable on the
//! same port. Killed on drop.

use std::path::PathBuf;
use std::time::Duration;

use super::dirs::server_dir;
use super::ports::PortReservation;
use super::process::{Launch, ServerProcess, accepts, find_binary};
use super::redis::command;
use crate::ServerError;

/// The process, its port, and the directory it runs in.
#[derive(Debug)]
pub(super) struct RespProcess {
    process: ServerProcess,
    port: u16,
    _reservation: PortReservation,
    _dir: tempfile::TempDir,
}

/// Where a process is about to start: its directory and port, not yet running.
pub(super) struct Prepared {
    pub(super) server: &'static str,
    pub(super) program: PathBuf,
    pub(super) dir: tempfile::TempDir,
    pub(super) reservation: PortReservation,
}

impl Prepared {
    /// Finds `redis-server` and reserves a directory and a port for `server` (for messages).
    pub(super) fn new(server: &'static str) -> Result<Self, ServerError> {
        let program = find_binary("redis-server", &[]).ok_or(ServerError::Missing {
            server,
            binary: "redis-server".to_owned(),
        })?;
        Ok(Self {
            server,
            program,
            dir: server_dir(server)?,
            reservation: PortReservation::new()?,
        })
    }

    /// The port the process will listen on.
    pub(super) fn port(&self) -> u16 {
        self.reservation.port()
    }

    /// Runs `redis-server ARGS`, logging to `SERVER.log`, and waits until it answers `PING`.
    pub(super) fn spawn(self, args: Vec<String>) -> Result<RespProcess, ServerError> {
        let launch = Launch {
            server: self.server,
            program: self.program,
            args,
            log: self.dir.path().join(format!("{}.log", self.server)),
            user: None,
            env: Vec::new(),
        };
        let mut process = RespProcess {
            process: ServerProcess::spawn(launch)?,
            port: self.reservation.port(),
            _reservation: self.reservation,
            _dir: self.dir,
        };
        process.wait_ready()?;
        Ok(process)
    }
}

impl RespProcess {
    fn wait_ready(&mut self) -> Result<(), ServerError> {
        let port = self.port;
        self.process.wait_ready(Duration::from_secs(10), || {
            accepts(port) && command(port, "PING").is_ok_and(|reply| reply.starts_with("+PONG"))
        })
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    pub(super) fn process(&mut self) -> &mut ServerProcess {
        &mut self.process
    }

    /// Kills and restarts the process on the same port and directory.
    pub(super) fn restart(&mut self) -> Result<(), ServerError> {
        self.process.restart()?;
        self.wait_ready()
    }

    pub(super) fn log_tail(&self) -> String {
        self.process.log_tail()
    }

    pub(super) fn log(&self) -> String {
        self.process.log()
    }
}
