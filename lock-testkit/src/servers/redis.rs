//! Redis servers: a standalone master, or a replica of one.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::ports::PortReservation;
use super::process::ServerProcess;
use super::resp_process::{Prepared, RespProcess};
use crate::ServerError;
use crate::tls::ServerTls;

/// A `redis-server` on a reserved loopback port with no persistence, killed on drop.
#[derive(Debug)]
pub struct RedisServer {
    resp: RespProcess,
    /// The TLS port of a server started by [`start_tls`](RedisServer::start_tls).
    tls: Option<PortReservation>,
}

impl RedisServer {
    /// Starts a standalone master.
    ///
    /// # Errors
    ///
    /// [`ServerError::Missing`] when `redis-server` is not installed; [`ServerError::Failed`]
    /// when it does not answer `PING` within 10 s.
    pub fn start() -> Result<Self, ServerError> {
        Self::start_with(&[])
    }

    /// Starts a replica of `master` and waits until it is in sync: linked up, and
    /// acknowledging the master's writes (`WAIT 1` answers 1).
    ///
    /// # Errors
    ///
    /// As [`start`](RedisServer::start), and [`ServerError::Failed`] when the replica is not in
    /// sync within 15 s.
    pub fn start_replica_of(master: &RedisServer) -> Result<Self, ServerError> {
        let replica = Self::start_with(&[
            "--replicaof".to_owned(),
            "127.0.0.1".to_owned(),
            master.port().to_string(),
        ])?;
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        let in_sync = || {
            replica
                .command("INFO replication")
                .is_ok_and(|info| info.contains("master_link_status:up"))
                && master
                    .command("SET distlock-replication-probe 1")
                    .and_then(|_| master.command("WAIT 1 200"))
                    // Every replica of the master acknowledges: `:N`, N at least 1.
                    .is_ok_and(|acks| {
                        acks.trim()
                            .strip_prefix(':')
                            .and_then(|count| count.parse::<u32>().ok())
                            .is_some_and(|count| count >= 1)
                    })
        };
        while !in_sync() {
            if std::time::Instant::now() > deadline {
                return Err(ServerError::Failed {
                    server: "redis",
                    reason: format!(
                        "the replica never synchronised; log:\n{}",
                        replica.resp.log_tail()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(replica)
    }

    /// Starts a server that also serves TLS on a port of its own, presenting `tls.identity`
    /// (and demanding a client certificate from `tls.ca` when `tls.require_client_cert`). The
    /// plaintext port stays open for [`command`](RedisServer::command).
    ///
    /// # Errors
    ///
    /// As [`start`](RedisServer::start).
    pub fn start_tls(tls: &ServerTls) -> Result<Self, ServerError> {
        let reservation = PortReservation::new()?;
        let auth_clients = if tls.require_client_cert { "yes" } else { "no" };
        let mut server = Self::start_with(&[
            "--tls-port".to_owned(),
            reservation.port().to_string(),
            "--tls-cert-file".to_owned(),
            tls.identity.cert.display().to_string(),
            "--tls-key-file".to_owned(),
            tls.identity.key.display().to_string(),
            "--tls-ca-cert-file".to_owned(),
            tls.ca.display().to_string(),
            "--tls-auth-clients".to_owned(),
            auth_clients.to_owned(),
        ])?;
        server.tls = Some(reservation);
        Ok(server)
    }

    /// `rediss://127.0.0.1:TLS_PORT` for a server started by [`start_tls`](Self::start_tls).
    pub fn tls_url(&self) -> Option<String> {
        self.tls
            .as_ref()
            .map(|tls| format!("rediss://127.0.0.1:{}", tls.port()))
    }

    /// Starts a server with extra command-line arguments.
    ///
    /// # Errors
    ///
    /// As [`start`](RedisServer::start).
    pub fn start_with(extra: &[String]) -> Result<Self, ServerError> {
        let prepared = Prepared::new("redis")?;
        let dir = prepared.dir.path().display().to_string();
        let mut args: Vec<String> = [
            "--port",
            &prepared.port().to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            &dir,
            "--daemonize",
            "no",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
        args.extend_from_slice(extra);
        Ok(Self {
            resp: prepared.spawn(args)?,
            tls: None,
        })
    }

    /// The server's URL: `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.resp.port())
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.resp.port()
    }

    /// The supervised process: kill, pause, resume.
    pub fn process(&mut self) -> &mut ServerProcess {
        self.resp.process()
    }

    /// Kills and restarts the server on the same port (data is not persisted).
    ///
    /// # Errors
    ///
    /// As [`start`](RedisServer::start).
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.resp.restart()
    }

    /// The log's last lines, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        self.resp.log_tail()
    }

    /// Sends one inline command and returns the raw reply (for `INFO`, `REPLICAOF NO ONE`, ...).
    ///
    /// # Errors
    ///
    /// The connection's I/O error.
    pub fn command(&self, line: &str) -> std::io::Result<String> {
        command(self.resp.port(), line)
    }
}

/// Sends one inline command to a Redis on loopback `port` and reads the reply.
pub(crate) fn command(port: u16, line: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(format!("{line}\r\n").as_bytes())?;
    let mut reply = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = stream.read(&mut buffer)?;
        reply.extend_from_slice(&buffer[..read]);
        if read == 0 || reply_complete(&reply) {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

/// Whether a RESP reply is complete: simple replies end at their first line, bulk strings at
/// their announced length, arrays once every element is.
fn reply_complete(reply: &[u8]) -> bool {
    if reply.first() == Some(&b'*') {
        return super::resp::parse(reply).is_some();
    }
    let text = String::from_utf8_lossy(reply);
    let Some(first_end) = text.find("\r\n") else {
        return false;
    };
    if !text.starts_with('$') {
        return true;
    }
    let length: i64 = text[1..first_end].parse().unwrap_or(-1);
    length < 0 || text.len() >= first_end + 2 + length as usize + 2
}
