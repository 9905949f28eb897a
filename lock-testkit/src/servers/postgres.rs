//! PostgreSQL servers, run as the unprivileged `postgres` user when started as root.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::dirs::server_dir;
use super::ports::PortReservation;
use super::process::{Launch, ServerProcess, run_as};
use crate::ServerError;
use crate::tls::{ServerTls, install};

/// A PostgreSQL cluster in a temp dir on a reserved loopback port, trust auth, killed on drop.
#[derive(Debug)]
pub struct PostgresServer {
    process: ServerProcess,
    port: u16,
    bin: PathBuf,
    _reservation: PortReservation,
    _dir: tempfile::TempDir,
}

/// The newest installed PostgreSQL's `bin` directory.
fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("postgres").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

impl PostgresServer {
    /// Initialises a cluster and starts it.
    ///
    /// # Errors
    ///
    /// [`ServerError::Missing`] when PostgreSQL is not installed; [`ServerError::Failed`] when
    /// `initdb` fails or the server is not ready within 30 s.
    pub fn start() -> Result<Self, ServerError> {
        Self::start_with_env(&[])
    }

    /// Starts one with extra environment variables (a clock-faking `LD_PRELOAD`, say).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with_env(env: &[(String, String)]) -> Result<Self, ServerError> {
        Self::launch(env, None, &[])
    }

    /// Starts one with extra server settings (`name=value`, as `postgres -c` takes them):
    /// `shared_preload_libraries=pg_stat_statements`, say.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with_settings(settings: &[&str]) -> Result<Self, ServerError> {
        Self::launch(&[], None, settings)
    }

    /// Starts one that speaks TLS only: `hostssl` is the only TCP entry of its `pg_hba.conf`
    /// (with `clientcert=verify-ca` when `tls` requires client certificates), so a client with
    /// `sslmode=disable` is refused.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_tls(tls: &ServerTls) -> Result<Self, ServerError> {
        Self::launch(&[], Some(tls), &[])
    }

    fn launch(
        env: &[(String, String)],
        tls: Option<&ServerTls>,
        settings: &[&str],
    ) -> Result<Self, ServerError> {
        let failed = |reason: String| ServerError::Failed {
            server: "postgres",
            reason,
        };
        let bin = postgres_bin().ok_or(ServerError::Missing {
            server: "postgres",
            binary: "/usr/lib/postgresql/*/bin/postgres".to_owned(),
        })?;
        let user = run_as("postgres").map_err(failed)?;
        let dir = server_dir("postgres")?;
        let data = dir.path().join("data");
        let sockets = dir.path().join("sock");
        for path in [&data, &sockets] {
            std::fs::create_dir(path)
                .map_err(|e| failed(format!("mkdir {}: {e}", path.display())))?;
            if let Some((uid, gid)) = user {
                std::os::unix::fs::chown(path, Some(uid), Some(gid))
                    .map_err(|e| failed(format!("chown: {e}")))?;
            }
        }
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some((uid, gid)) = user {
            use std::os::unix::process::CommandExt;
            initdb.uid(uid).gid(gid);
        }
        let output = initdb
            .output()
            .map_err(|e| failed(format!("initdb: {e}")))?;
        if !output.status.success() {
            return Err(failed(format!(
                "initdb: {}",
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        let reservation = PortReservation::new()?;
        let port = reservation.port();
        let mut args = vec![
            "-D".to_owned(),
            data.display().to_string(),
            "-p".to_owned(),
            port.to_string(),
            "-k".to_owned(),
            sockets.display().to_string(),
            "-c".to_owned(),
            "listen_addresses=127.0.0.1".to_owned(),
            "-c".to_owned(),
            "max_connections=300".to_owned(),
            "-c".to_owned(),
            "fsync=off".to_owned(),
        ];
        for setting in settings {
            args.extend(["-c".to_owned(), (*setting).to_owned()]);
        }
        if let Some(tls) = tls {
            args.extend(serve_tls(tls, &data, user).map_err(failed)?);
        }
        let log = dir.path().join("postgres.log");
        let launch = Launch {
            server: "postgres",
            program: bin.join("postgres"),
            args,
            log,
            user,
            env: env.to_vec(),
        };
        let mut server = Self {
            process: ServerProcess::spawn(launch)?,
            port,
            bin,
            _reservation: reservation,
            _dir: dir,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), ServerError> {
        let (isready, port) = (self.bin.join("pg_isready"), self.port.to_string());
        self.process.wait_ready(Duration::from_secs(30), || {
            Command::new(&isready)
                .args(["-q", "-h", "127.0.0.1", "-p", &port, "-U", "postgres"])
                .status()
                .is_ok_and(|status| status.success())
        })
    }

    /// The server's URL: `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
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
    /// As [`start`](PostgresServer::start).
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.process.restart()?;
        self.wait_ready()
    }
}

/// Installs the certificates in the data directory and allows TCP clients over TLS only;
/// returns the server's TLS settings.
fn serve_tls(
    tls: &ServerTls,
    data: &std::path::Path,
    user: Option<(u32, u32)>,
) -> Result<Vec<String>, String> {
    let identity = install(&tls.identity, data, "server", user)?;
    let ca = data.join("client-ca.pem");
    std::fs::copy(&tls.ca, &ca).map_err(|e| format!("copy {}: {e}", tls.ca.display()))?;
    let client_cert = if tls.require_client_cert {
        " clientcert=verify-ca"
    } else {
        ""
    };
    let hba = format!("local all all trust\nhostssl all all 127.0.0.1/32 trust{client_cert}\n");
    let hba_file = data.join("pg_hba.conf");
    std::fs::write(&hba_file, hba).map_err(|e| format!("write pg_hba.conf: {e}"))?;
    Ok([
        "ssl=on".to_owned(),
        format!("ssl_cert_file={}", identity.cert.display()),
        format!("ssl_key_file={}", identity.key.display()),
        format!("ssl_ca_file={}", ca.display()),
    ]
    .into_iter()
    .flat_map(|setting| ["-c".to_owned(), setting])
    .collect())
}
