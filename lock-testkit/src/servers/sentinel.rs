//! One Redis Sentinel: `redis-server SENTINEL.CONF --sentinel` on a reserved loopback port.

use super::process::ServerProcess;
use super::redis::command;
use super::resp::{Reply, call};
use super::resp_process::{Prepared, RespProcess};
use crate::ServerError;

/// A sentinel process monitoring one primary, with its (sentinel-rewritten) configuration in a
/// temp dir. Killed on drop. Started by [`RedisSentinel`](super::RedisSentinel).
#[derive(Debug)]
pub struct SentinelServer {
    resp: RespProcess,
}

/// What a sentinel reports about one instance: `SENTINEL master` or one of `SENTINEL
/// replicas`, as field-value pairs.
pub(crate) type Fields = Vec<(String, String)>;

impl SentinelServer {
    /// Starts a sentinel that monitors the primary on loopback `primary_port` as `name` with
    /// `quorum`, a 1 s down-after period and a 5 s fail-over timeout, and waits until it
    /// answers `PING`.
    pub(crate) fn start(name: &str, primary_port: u16, quorum: usize) -> Result<Self, ServerError> {
        let prepared = Prepared::new("sentinel")?;
        let port = prepared.port();
        let conf = prepared.dir.path().join("sentinel.conf");
        let text = format!(
            "port {port}\nbind 127.0.0.1\ndir \"{}\"\nsentinel resolve-hostnames no\n\
             sentinel monitor {name} 127.0.0.1 {primary_port} {quorum}\n\
             sentinel down-after-milliseconds {name} 1000\n\
             sentinel failover-timeout {name} 5000\n\
             sentinel parallel-syncs {name} 1\n",
            prepared.dir.path().display()
        );
        std::fs::write(&conf, text).map_err(|error| ServerError::Failed {
            server: "sentinel",
            reason: format!("{}: {error}", conf.display()),
        })?;
        let args = vec![conf.display().to_string(), "--sentinel".to_owned()];
        Ok(Self {
            resp: prepared.spawn(args)?,
        })
    }

    /// The sentinel's port.
    pub fn port(&self) -> u16 {
        self.resp.port()
    }

    /// The supervised process: kill, pause, resume.
    pub fn process(&mut self) -> &mut ServerProcess {
        self.resp.process()
    }

    /// Kills and restarts the sentinel on the same port, with the configuration it last wrote
    /// (its id, and the replicas and sentinels it knew).
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when it does not answer `PING` within 10 s.
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.resp.restart()
    }

    /// Sends one inline command (`SENTINEL masters`, `SENTINEL ckquorum distlock`, ...) and
    /// returns the raw reply.
    ///
    /// # Errors
    ///
    /// The connection's I/O error.
    pub fn command(&self, line: &str) -> std::io::Result<String> {
        command(self.resp.port(), line)
    }

    /// The port of the primary this sentinel names for `name` (`SENTINEL
    /// get-master-addr-by-name`), if it answers.
    pub fn primary_port(&self, name: &str) -> Option<u16> {
        let reply = call(
            self.resp.port(),
            &["SENTINEL", "get-master-addr-by-name", name],
        )
        .ok()?;
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
        let shown = || format!("{} (sentinel on {})", args.join(" "), self.resp.port());
        call(self.resp.port(), args)
            .map_err(|error| format!("{}: {error}", shown()))?
            .ok()
            .map_err(|error| format!("{}: {error}", shown()))
    }

    /// The log's last lines, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        self.resp.log_tail()
    }

    /// How many times the log says the sentinel entered TILT mode.
    pub(crate) fn tilts(&self) -> usize {
        self.resp.log().matches("+tilt").count()
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
