//! Bringing up a Redis Cluster: its nodes on reserved client and bus ports, joined by
//! `redis-cli --cluster create`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::dirs::server_dir;
use super::ports::PortReservation;
use super::process::{find_binary, log_tail};
use super::redis::RedisServer;
use super::redis_cluster::{SETTLE, failed};
use crate::ServerError;

/// The nodes of a cluster just created, and what must live as long as they do.
#[derive(Debug)]
pub(crate) struct Formed {
    /// Every node; `redis-cli` made the first `primaries` of them primaries.
    pub(crate) nodes: Vec<RedisServer>,
    /// Each node's cluster bus port.
    pub(crate) bus_ports: Vec<PortReservation>,
    /// Holds `create.log`, the output of `redis-cli --cluster create`.
    pub(crate) dir: tempfile::TempDir,
}

/// Starts `primaries * (1 + replicas_per_primary)` cluster-enabled nodes (1 s node timeout,
/// bus on a reserved port) and joins them with `redis-cli --cluster create`. The cluster may
/// not have settled yet.
pub(crate) fn form(primaries: usize, replicas_per_primary: usize) -> Result<Formed, ServerError> {
    let cli = find_binary("redis-cli", &[]).ok_or(ServerError::Missing {
        server: "redis-cluster",
        binary: "redis-cli".to_owned(),
    })?;
    let dir = server_dir("redis-cluster")?;
    let count = primaries * (1 + replicas_per_primary);
    let mut nodes = Vec::with_capacity(count);
    let mut bus_ports = Vec::with_capacity(count);
    for _ in 0..count {
        let bus = PortReservation::new()?;
        let args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "1000",
            "--cluster-port",
            &bus.port().to_string(),
            // Replicas sync at once, not after the default 5 s wait for more of them.
            "--repl-diskless-sync-delay",
            "0",
        ];
        nodes.push(RedisServer::start_with(&args.map(str::to_owned))?);
        bus_ports.push(bus);
    }
    let mut args = vec!["--cluster".to_owned(), "create".to_owned()];
    args.extend(
        nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.port())),
    );
    args.extend([
        "--cluster-replicas".to_owned(),
        replicas_per_primary.to_string(),
        "--cluster-yes".to_owned(),
    ]);
    run_cli(&cli, &args, &dir.path().join("create.log"))?;
    Ok(Formed {
        nodes,
        bus_ports,
        dir,
    })
}

/// Runs `redis-cli` with `args`, its output to `log`, for 30 s at most.
fn run_cli(cli: &Path, args: &[String], log: &Path) -> Result<(), ServerError> {
    let io = |error: std::io::Error| failed(format!("redis-cli: {error}"));
    let out = std::fs::File::create(log).map_err(io)?;
    let mut child = (Command::new(cli).args(args).stdin(Stdio::null()))
        .stdout(out.try_clone().map_err(io)?)
        .stderr(out)
        .spawn()
        .map_err(io)?;
    let deadline = Instant::now() + SETTLE;
    loop {
        if let Some(status) = child.try_wait().map_err(io)? {
            return match status.success() {
                true => Ok(()),
                false => Err(failed(format!("redis-cli {status}:\n{}", log_tail(log)))),
            };
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed(format!("redis-cli hung:\n{}", log_tail(log))));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
