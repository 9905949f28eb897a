//! A ZooKeeper server process: standalone, optionally serving TLS, or one node of a
//! [`ZkEnsemble`](super::ZkEnsemble).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::dirs::server_dir;
use super::ports::PortReservation;
use super::process::{Launch, ServerProcess, accepts};
use super::zookeeper_tls;
use crate::ServerError;
use crate::tls::ServerTls;

/// One ZooKeeper server process (standalone, or one node of a [`ZkEnsemble`](super::ZkEnsemble)).
#[derive(Debug)]
pub struct ZkServer {
    process: ServerProcess,
    client_port: u16,
    /// The TLS client port of a server started by [`start_tls`](ZkServer::start_tls).
    tls_port: Option<u16>,
    /// The client port, then the peer and election ports (ensemble) or the TLS port.
    _reservations: Vec<PortReservation>,
    _dir: tempfile::TempDir,
}

/// Jars ZooKeeper 3.8 needs, from Debian's packages.
const JARS: &[&str] = &[
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "slf4j-api.jar",
    "slf4j-simple.jar",
    "netty-handler.jar",
    "netty-common.jar",
    "netty-buffer.jar",
    "netty-transport.jar",
    "netty-codec.jar",
    "netty-resolver.jar",
    "netty-transport-native-unix-common.jar",
    "netty-transport-classes-epoll.jar",
    "commons-io.jar",
    "jackson-databind.jar",
    "jackson-core.jar",
    "jackson-annotations.jar",
    "metrics-core.jar",
    "snappy-java.jar",
    "commons-cli.jar",
    "audience-annotations.jar",
];

/// The classpath for ZooKeeper from `/usr/share/java`, or `None` when it is not installed.
fn zookeeper_classpath() -> Option<String> {
    let base = Path::new("/usr/share/java");
    if !base.join("zookeeper.jar").is_file() {
        return None;
    }
    let present: Vec<String> = JARS
        .iter()
        .map(|jar| base.join(jar))
        .filter(|jar| jar.is_file())
        .map(|jar| jar.display().to_string())
        .collect();
    Some(present.join(":"))
}

fn java() -> Result<PathBuf, ServerError> {
    super::process::find_binary("java", &[]).ok_or(ServerError::Missing {
        server: "zookeeper",
        binary: "java".to_owned(),
    })
}

/// Sends a four-letter command (`ruok`, `srvr`, `mntr`, `wchc`, ...) and returns the answer.
///
/// # Errors
///
/// The connection's I/O error.
pub fn four_letter(port: u16, command: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(command.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

/// The settings a node needs besides its ports.
pub(super) struct NodeConfig<'a> {
    pub(super) tick_ms: u32,
    pub(super) my_id: Option<usize>,
    pub(super) peers: &'a [(u16, u16, u16)],
    pub(super) env: &'a [(String, String)],
    /// Serve TLS on the second reservation's port with these certificates.
    pub(super) tls: Option<&'a ServerTls>,
    /// How often the server reaps empty container nodes (lock parents).
    pub(super) reap_every: Reaping,
}

/// How often a server looks for empty container nodes to delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reaping {
    /// Every second, so that tests see a released lock's parent go soon.
    Soon,
    /// At ZooKeeper's default minute: no reaper transaction in a short test.
    Rarely,
}

impl ZkServer {
    /// Starts a standalone server with a 2 s tick (sessions of 4 s to 40 s).
    ///
    /// # Errors
    ///
    /// [`ServerError::Missing`] when ZooKeeper or Java is not installed; [`ServerError::Failed`]
    /// when it does not serve requests within 30 s.
    pub fn start() -> Result<Self, ServerError> {
        Self::start_with_tick(Duration::from_millis(2000))
    }

    /// Starts a standalone server with `tick` (sessions may last 2 to 20 ticks): use a short
    /// tick for tests of session expiry.
    ///
    /// # Errors
    ///
    /// As [`start`](ZkServer::start).
    pub fn start_with_tick(tick: Duration) -> Result<Self, ServerError> {
        Self::start_with_tick_and_env(tick, &[])
    }

    /// Starts a standalone server with `tick` and extra environment variables for the JVM.
    ///
    /// # Errors
    ///
    /// As [`start`](ZkServer::start).
    pub fn start_with_tick_and_env(
        tick: Duration,
        env: &[(String, String)],
    ) -> Result<Self, ServerError> {
        Self::start_standalone(tick, env, Reaping::Soon)
    }

    /// Starts a standalone server with `tick` whose container reaper runs at ZooKeeper's
    /// default minute instead of every second: for tests that count what a client's requests
    /// make the server do. Every reaper pass over an empty parent is a transaction (a delete,
    /// or a refused one when the parent is in use again), which shows in the ensemble's zxids.
    ///
    /// # Errors
    ///
    /// As [`start`](ZkServer::start).
    pub fn start_rarely_reaped(tick: Duration) -> Result<Self, ServerError> {
        Self::start_standalone(tick, &[], Reaping::Rarely)
    }

    fn start_standalone(
        tick: Duration,
        env: &[(String, String)],
        reap_every: Reaping,
    ) -> Result<Self, ServerError> {
        let config = NodeConfig {
            tick_ms: tick.as_millis() as u32,
            my_id: None,
            peers: &[],
            env,
            tls: None,
            reap_every,
        };
        let reservation = PortReservation::new()?;
        let mut server = Self::launch(vec![reservation], &config)?;
        // `ruok` answers before the server serves; `srvr` shows a mode only once it does.
        server.wait_ready(|answer| answer.contains("Mode: "), "srvr")?;
        Ok(server)
    }

    /// Starts a standalone server that serves TLS on [`tls_port`](ZkServer::tls_port) with
    /// `tls` (mutual TLS when it demands client certificates), besides plaintext on
    /// [`port`](ZkServer::port) for the four-letter commands.
    ///
    /// # Errors
    ///
    /// As [`start`](ZkServer::start).
    pub fn start_tls(tls: &ServerTls) -> Result<Self, ServerError> {
        let config = NodeConfig {
            tick_ms: 2000,
            my_id: None,
            peers: &[],
            env: &[],
            tls: Some(tls),
            reap_every: Reaping::Soon,
        };
        let reservations = vec![PortReservation::new()?, PortReservation::new()?];
        let mut server = Self::launch(reservations, &config)?;
        server.wait_ready(|answer| answer.contains("Mode: "), "srvr")?;
        // The secure port opens after the plaintext one already serves: a client let in
        // between would find it closed.
        let secure = server.tls_port.unwrap_or(0);
        server
            .process
            .wait_ready(Duration::from_secs(30), || accepts(secure))?;
        Ok(server)
    }

    /// Starts a node whose client port is the first of `reservations`.
    pub(super) fn launch(
        reservations: Vec<PortReservation>,
        config: &NodeConfig<'_>,
    ) -> Result<Self, ServerError> {
        let client_port = reservations.first().map_or(0, PortReservation::port);
        let failed = |reason: String| ServerError::Failed {
            server: "zookeeper",
            reason,
        };
        let classpath = zookeeper_classpath().ok_or(ServerError::Missing {
            server: "zookeeper",
            binary: "/usr/share/java/zookeeper.jar".to_owned(),
        })?;
        let java = java()?;
        let dir = server_dir("zookeeper")?;
        let data = dir.path().join("data");
        std::fs::create_dir(&data).map_err(|e| failed(format!("mkdir: {e}")))?;
        let mut cfg = format!(
            "tickTime={}\ninitLimit=20\nsyncLimit=10\ndataDir={}\nclientPort={client_port}\nclientPortAddress=127.0.0.1\n\
             admin.enableServer=false\n4lw.commands.whitelist=*\nmaxClientCnxns=0\nextendedTypesEnabled=true\n",
            config.tick_ms,
            data.display()
        );
        let mut jvm = Vec::new();
        let tls_port = match config.tls {
            Some(tls) => {
                let port = reservations.get(1).map_or(0, PortReservation::port);
                let secure = zookeeper_tls::configure(dir.path(), tls, port).map_err(failed)?;
                cfg.push_str(&secure.cfg);
                jvm.extend(secure.jvm_args);
                Some(port)
            }
            None => None,
        };
        if let Some(my_id) = config.my_id {
            std::fs::write(data.join("myid"), my_id.to_string())
                .map_err(|e| failed(format!("myid: {e}")))?;
            for (index, (_, peer, election)) in config.peers.iter().enumerate() {
                cfg.push_str(&format!(
                    "server.{}=127.0.0.1:{peer}:{election}\n",
                    index + 1
                ));
            }
        }
        let cfg_path = dir.path().join("zoo.cfg");
        std::fs::write(&cfg_path, cfg).map_err(|e| failed(format!("zoo.cfg: {e}")))?;
        let main = if config.my_id.is_some() {
            "org.apache.zookeeper.server.quorum.QuorumPeerMain"
        } else {
            "org.apache.zookeeper.server.ZooKeeperServerMain"
        };
        let mut args = jvm;
        args.extend([
            "-Xms64m".to_owned(),
            "-Xmx256m".to_owned(),
            "-XX:+UseSerialGC".to_owned(),
            "-XX:TieredStopAtLevel=1".to_owned(),
            "-Dzookeeper.admin.enableServer=false".to_owned(),
        ]);
        if config.reap_every == Reaping::Soon {
            // Reap empty container nodes (lock parents) within a second instead of a minute.
            args.push("-Dznode.container.checkIntervalMs=1000".to_owned());
        }
        args.extend([
            "-cp".to_owned(),
            classpath,
            main.to_owned(),
            cfg_path.display().to_string(),
        ]);
        let launch = Launch {
            server: "zookeeper",
            program: java,
            args,
            log: dir.path().join("zookeeper.log"),
            user: None,
            env: config.env.to_vec(),
        };
        Ok(Self {
            process: ServerProcess::spawn(launch)?,
            client_port,
            tls_port,
            _reservations: reservations,
            _dir: dir,
        })
    }

    pub(super) fn wait_ready(
        &mut self,
        ready: impl Fn(&str) -> bool,
        command: &str,
    ) -> Result<(), ServerError> {
        let port = self.client_port;
        self.process.wait_ready(Duration::from_secs(30), || {
            four_letter(port, command).is_ok_and(|answer| ready(&answer))
        })
    }

    /// The connect string: `127.0.0.1:PORT`.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.client_port)
    }

    /// The server's URL: `zk://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("zk://{}", self.connect_string())
    }

    /// The client port.
    pub fn port(&self) -> u16 {
        self.client_port
    }

    /// The TLS client port, for a server started by [`start_tls`](ZkServer::start_tls).
    pub fn tls_port(&self) -> Option<u16> {
        self.tls_port
    }

    /// The TLS URL, `zk+tls://127.0.0.1:PORT` (without the certificate parameters), for a
    /// server started by [`start_tls`](ZkServer::start_tls).
    pub fn tls_url(&self) -> Option<String> {
        self.tls_port
            .map(|port| format!("zk+tls://127.0.0.1:{port}"))
    }

    /// The supervised process: kill, pause, resume.
    pub fn process(&mut self) -> &mut ServerProcess {
        &mut self.process
    }

    /// This node's `Mode:` from `srvr` (`standalone`, `leader`, `follower`), if it answers.
    pub fn mode(&self) -> Option<String> {
        let answer = four_letter(self.client_port, "srvr").ok()?;
        answer
            .lines()
            .find_map(|line| line.strip_prefix("Mode: "))
            .map(str::to_owned)
    }

    /// Kills and restarts the node on the same ports and data directory.
    ///
    /// # Errors
    ///
    /// As [`start`](ZkServer::start).
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.process.restart()?;
        self.wait_ready(|answer| answer.contains("Mode: "), "srvr")
    }
}
