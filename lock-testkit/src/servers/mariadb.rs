//! MariaDB (or MySQL-compatible) servers.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::dirs::server_dir;
use super::ports::PortReservation;
use super::process::{Launch, ServerProcess, accepts, find_binary, run_as};
use crate::ServerError;
use crate::tls::{self, ServerTls};

/// The database the tests use; created at start-up.
const DATABASE: &str = "distlock";

/// A MariaDB server in a temp dir on a reserved loopback port (`root`, no password), killed on drop.
#[derive(Debug)]
pub struct MariaDbServer {
    process: ServerProcess,
    port: u16,
    client: PathBuf,
    /// Whether the admin client must speak TLS (the server refuses plaintext TCP).
    tls: bool,
    _reservation: PortReservation,
    _dir: tempfile::TempDir,
}

impl MariaDbServer {
    /// Installs a data directory, starts the server and creates the `distlock` database.
    ///
    /// # Errors
    ///
    /// [`ServerError::Missing`] when MariaDB is not installed; [`ServerError::Failed`] when
    /// set-up fails or the server is not ready within 30 s.
    pub fn start() -> Result<Self, ServerError> {
        Self::start_with_env(&[])
    }

    /// Starts one with extra environment variables (a clock-faking `LD_PRELOAD`, say).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with_env(env: &[(String, String)]) -> Result<Self, ServerError> {
        Self::launch(env, None)
    }

    /// Starts one that speaks TLS only (`require_secure_transport`). MariaDB asks for client
    /// certificates per account (`REQUIRE X509`), not per server: `require_client_cert` is
    /// not read here.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_tls(tls: &ServerTls) -> Result<Self, ServerError> {
        Self::launch(&[], Some(tls))
    }

    fn launch(env: &[(String, String)], tls: Option<&ServerTls>) -> Result<Self, ServerError> {
        let failed = |reason: String| ServerError::Failed {
            server: "mariadb",
            reason,
        };
        let sbin = ["/usr/sbin", "/usr/bin"];
        let missing = |binary: &str| ServerError::Missing {
            server: "mariadb",
            binary: binary.to_owned(),
        };
        let server = find_binary("mariadbd", &sbin).ok_or_else(|| missing("mariadbd"))?;
        let install = find_binary("mariadb-install-db", &sbin)
            .ok_or_else(|| missing("mariadb-install-db"))?;
        let client = find_binary("mariadb", &sbin).ok_or_else(|| missing("mariadb"))?;
        let dir = server_dir("mariadb")?;
        let data = dir.path().join("data");
        // mariadbd drops to `mysql` when started as root; its socket and pid file go here too.
        let mysql = run_as("mysql").map_err(failed)?;
        if let Some((uid, gid)) = mysql {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| failed(format!("chown: {e}")))?;
        }
        // Temporary tables in a directory of this server's own, not the shared /tmp.
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).map_err(|e| failed(format!("mkdir tmp: {e}")))?;
        if let Some((uid, gid)) = mysql {
            std::os::unix::fs::chown(&tmp, Some(uid), Some(gid))
                .map_err(|e| failed(format!("chown tmp: {e}")))?;
        }
        let output = {
            // Bootstraps started together have failed ("Unknown table 'mysql.tmp_user_sys'"):
            // one at a time per process.
            static BOOTSTRAP: std::sync::Mutex<()> = std::sync::Mutex::new(());
            let _one_at_a_time = BOOTSTRAP
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            Command::new(install)
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .args([
                    "--user=mysql",
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ])
                .arg(format!("--tmpdir={}", tmp.display()))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| failed(format!("mariadb-install-db: {e}")))?
        };
        if !output.status.success() {
            return Err(failed(format!(
                "mariadb-install-db: {}",
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        let reservation = PortReservation::new()?;
        let port = reservation.port();
        let path = |name: &str| dir.path().join(name).display().to_string();
        let mut args = vec![
            "--no-defaults".to_owned(),
            format!("--datadir={}", data.display()),
            "--user=mysql".to_owned(),
            format!("--port={port}"),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--socket={}", path("sock")),
            format!("--pid-file={}", path("pid")),
            format!("--tmpdir={}", path("tmp")),
            "--max-connections=500".to_owned(),
            "--innodb-flush-log-at-trx-commit=2".to_owned(),
        ];
        if let Some(tls) = tls {
            let identity =
                tls::install(&tls.identity, dir.path(), "server", mysql).map_err(failed)?;
            args.extend([
                format!("--ssl-ca={}", tls.ca.display()),
                format!("--ssl-cert={}", identity.cert.display()),
                format!("--ssl-key={}", identity.key.display()),
                "--require-secure-transport=ON".to_owned(),
            ]);
        }
        let launch = Launch {
            server: "mariadb",
            program: server,
            args,
            log: dir.path().join("mariadb.log"),
            user: None,
            env: env.to_vec(),
        };
        let mut server = Self {
            process: ServerProcess::spawn(launch)?,
            port,
            client,
            tls: tls.is_some(),
            _reservation: reservation,
            _dir: dir,
        };
        server.wait_ready()?;
        let create = format!("CREATE DATABASE IF NOT EXISTS {DATABASE}");
        let output = server
            .sql(&create)
            .map_err(|e| failed(format!("create database: {e}")))?;
        if !output.status.success() {
            return Err(failed(format!(
                "create database: {}",
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        Ok(server)
    }

    fn sql(&self, statement: &str) -> std::io::Result<std::process::Output> {
        admin(&self.client, self.port, self.tls, statement).output()
    }

    fn wait_ready(&mut self) -> Result<(), ServerError> {
        let (port, tls) = (self.port, self.tls);
        let client = self.client.clone();
        self.process.wait_ready(Duration::from_secs(30), || {
            accepts(port)
                && admin(&client, port, tls, "SELECT 1")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success())
        })
    }

    /// The server's URL: `mysql://root@127.0.0.1:PORT/distlock`.
    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/{DATABASE}", self.port)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The supervised process: kill, pause, resume.
    pub fn process(&mut self) -> &mut ServerProcess {
        &mut self.process
    }

    /// Kills and restarts the server on the same port and data directory.
    ///
    /// # Errors
    ///
    /// As [`start`](MariaDbServer::start).
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.process.restart()?;
        self.wait_ready()
    }
}

/// The admin client running `statement` as `root` over TCP (TLS without checks when the server
/// demands TLS: it is our own server on loopback).
fn admin(client: &std::path::Path, port: u16, tls: bool, statement: &str) -> Command {
    let mut command = Command::new(client);
    command.args([
        "--protocol=tcp",
        "-h",
        "127.0.0.1",
        "-u",
        "root",
        "-P",
        &port.to_string(),
    ]);
    if tls {
        command.arg("--ssl");
    }
    command.args(["-e", statement]);
    command
}
