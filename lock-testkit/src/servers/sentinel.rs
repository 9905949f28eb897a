//! One Redis Sentinel: `redis-server SENTINEL.CONF --sentinel` on a reserved loopback port.

use std::time::Duration;

use super::dirs::server_dir;
use super::ports::PortReservation;
use super::process::{Launch, ServerProcess, accepts, find_binary};
use super::redis::command;
use super::resp::{Reply, call};
use crate::ServerError;

/// A sentinel process monitoring one primary, with its (sentinel-rewritten) configuration in a
/// temp dir. Killed on drop. Started by [`RedisSentinel`](super::RedisSentinel).
#[derive(Debug)]
pub struct SentinelServer {
    process: ServerProcess,
    port: u16,
    _reservation: PortReservation,
    _dir: tempfile::TempDir,
}

/// What a sentinel reports about one instance: `SENTINEL master` or one of `SENTINEL
/// replicas`, as field-value pairs.
pub(crate) type Fields = Vec<(String, String)>;

impl SentinelServer {
    /// Starts a sentinel that monitors the primary on loopback `primary_port` as `name` with
    /// `quorum`, a 1 s down-after period and a 5 s fail-over timeout, and waits until it
    /// answers `PING`.
    pub(crate) fn start(name: &str, primary_port: u16, quorum: usize) -> Result<Self, ServerError> {
        let program = find_binary("redis-server", &[]).ok_or(ServerError::Missing {
            server: "sentinel",
            binary: "redis-server".to_owned(),
        })?;
        let dir = server_dir("sentinel")?;
        let reservation = PortReservation::new()?;
        let port = reservation.port();
        let conf = dir.path().join("sentinel.conf");
        let text = format!(
            "port {port}\nbind 127.0.0.1\ndir \"{}\"\nsentinel resolve-hostnames no\n\
             sentinel monitor {name} 127.0.0.1 {primary_port} {quorum}\n\
             sentinel down-after-milliseconds {name} 1000\n\
             sentinel failover-timeout {name} 5000\n\
             sentinel parallel-syncs {name} 1\n",
            dir.path().display()
        );
        std::fs::write(&conf, text).map_err(|error| ServerError::Failed {
            server: "sentinel",
            reason: format!("{}: {error}", conf.display()),
        })?;
        let launch = Launch {
            server: "sentinel",
            program,
            args: vec![conf.display().to_string(), "--sentinel".to_owned()],
            log: dir.path().join("sentinel.log"),
            user: None,
            env: Vec::new(),
        };
        let mut sentinel = Self {
            process: ServerProcess::spawn(launch)?,
            port,
            _reservation: reservation,
            _dir: dir,
        };
        sentinel.wait_ready()?;
        Ok(sentinel)
    }

    fn wait_ready(&mut self) -> Result<(), ServerError> {
        let port = self.port;
        self.process.wait_ready(Duration::from_secs(10), || {
            accepts(port) && command(port, "PING").is_ok_and(|reply| reply.starts_with("+PONG"))
        })
    }

    /// The sentinel's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The supervised process: kill, pause, resume.
    pub fn process(&mut self) -> &mut ServerProcess {
        &mut self.process
    }

    /// Kills and restarts the sentinel on the same port, with the configuration it last wrote
    /// (its id, and the replicas and sentinels it knew).
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when it does not answer `PING` within 10 s.
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.process.restart()?;
        self.wait_ready()
    }

    /// Sends one inline command (`SENTINEL masters`, `SENTINEL ckquorum distlock`, ...) and
    /// returns the raw reply.
    ///
    /// # Errors
    ///
    /// The connection's I/O error.
    pub fn command(&self, line: &str) -> std::io::Result<String> {
        command(self.port, line)
    }

    /// The port of the primary this sentinel names for `name` (`SENTINEL
    /// get-master-addr-by-name`), if it answers.
    pub fn primary_port(&self, name: &str) -> Option<u16> {
        let reply = call(self.port, &["SENTINEL", "get-master-addr-by-name", name]).ok()?;
        reply.items().get(1)?.text()?.parse().ok()
    }

    /// `SENTINEL master NAME`.
    pub(crate) fn master(&self, name: &str) -> Result<Fields, String> {
        Ok(fields(&self.ask(&["SENTINEL", "master", name])?))
    }

    /// `SENTINEL replicas NAME`.
    pub(crate) fn replicas(&self, name: &str) -> Result<Vec<Fields>, String> {
        let reply = self.ask(&["SENTINEL", "replicas", name])?;
        Ok(reply.items().iter().map(fields).collect())
    }

    /// Sends `args`, failing with the error of the connection or of the sentinel.
    pub(crate) fn ask(&self, args: &[&str]) -> Result<Reply, String> {
        let shown = || format!("{} (sentinel on {})", args.join(" "), self.port);
        call(self.port, args)
            .map_err(|error| format!("{}: {error}", shown()))?
            .ok()
            .map_err(|error| format!("{}: {error}", shown()))
    }

    /// The log's last lines, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        self.process.log_tail()
    }
}

/// A flat array of names and values as pairs.
fn fields(reply: &Reply) -> Fields {
    reply
        .items()
        .chunks(2)
        .filter_map(|pair| Some((pair.first()?.text()?, pair.get(1)?.text()?)))
        .collect()
}

/// The value of `name` among `fields`, or `""`.
pub(crate) fn field<'a>(fields: &'a Fields, name: &str) -> &'a str {
    fields
        .iter()
        .find(|(key, _)| key == name)
        .map_or("", |(_, value)| value)
}
