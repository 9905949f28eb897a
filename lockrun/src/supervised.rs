//! lockrun's side of the supervisor: starting it, ordering it, hearing from it.

use std::ffi::OsString;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixListener;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::process::Child;

use crate::control::{Order, Report};
use crate::supervisor;

/// How long the supervisor may take to start the command and report.
const START_LIMIT: Duration = Duration::from_secs(10);

/// A running supervisor and the command group it started.
#[derive(Debug)]
pub(crate) struct Supervised {
    process: Child,
    reports: Lines<BufReader<OwnedReadHalf>>,
    orders: OwnedWriteHalf,
    group: Pid,
    last_stop_at: Option<u64>,
}

impl Supervised {
    /// Starts the supervisor for `command` with `env` set (`LOCK_NAME`, `LOCK_FENCING_TOKEN`,
    /// ...), and waits until the command runs. The supervisor stops the command group at monotonic
    /// instant `stop_at_ns` unless told a later one.
    pub(crate) async fn start(
        command: &[OsString],
        env: &[(&str, String)],
        grace: Duration,
        stop_at_ns: u64,
    ) -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("lockrun-").tempdir()?;
        let path = dir.path().join("control");
        let listener = UnixListener::bind(&path)?;
        let me = std::env::current_exe()?;
        let process = tokio::process::Command::new(me)
            .arg(supervisor::ARG)
            .arg(&path)
            .arg(grace.as_millis().to_string())
            .arg(stop_at_ns.to_string())
            .arg("--")
            .args(command)
            .envs(env.iter().map(|(key, value)| (key, value)))
            .kill_on_drop(true)
            .spawn()?;
        let started = async {
            let (stream, _) = listener.accept().await?;
            let (read, orders) = stream.into_split();
            let mut reports = BufReader::new(read).lines();
            let line = reports.next_line().await?.unwrap_or_default();
            match Report::parse(&line) {
                Some(Report::Started(pid)) => Ok((reports, orders, pid)),
                other => Err(std::io::Error::other(format!(
                    "the supervisor reported {other:?} instead of the command's start"
                ))),
            }
        };
        let (reports, orders, pid) =
            tokio::time::timeout(START_LIMIT, started)
                .await
                .map_err(|_| {
                    std::io::Error::other("the supervisor did not start the command in time")
                })??;
        // The supervisor is connected: the socket's directory has served its purpose. Removed
        // now rather than on drop, which a lockrun ending by `exit` or a signal never reaches.
        drop(listener);
        if let Err(error) = dir.close() {
            eprintln!("lockrun: could not remove the control socket's directory: {error}");
        }
        let group = Pid::from_raw(pid)
            .ok_or_else(|| std::io::Error::other("the supervisor reported pid 0"))?;
        Ok(Self {
            process,
            reports,
            orders,
            group,
            last_stop_at: Some(stop_at_ns),
        })
    }

    /// The supervisor's next report; `None` when it is gone without one.
    pub(crate) async fn next_report(&mut self) -> Option<Report> {
        loop {
            match self.reports.next_line().await {
                Ok(Some(line)) => {
                    if let Some(report) = Report::parse(&line) {
                        return Some(report);
                    }
                }
                _ => return None,
            }
        }
    }

    /// Tells the supervisor to stop the command group at monotonic instant `at_ns` unless told
    /// a later one (sent only when it changed).
    pub(crate) async fn stop_at(&mut self, at_ns: u64) {
        if self.last_stop_at != Some(at_ns) {
            self.last_stop_at = Some(at_ns);
            self.order(Order::StopAt(at_ns)).await;
        }
    }

    /// Tells the supervisor to stop the command group now.
    pub(crate) async fn stop(&mut self) {
        self.order(Order::Stop).await;
    }

    async fn order(&mut self, order: Order) {
        // A supervisor that is gone has stopped the command group already.
        let _ = self.orders.write_all(order.line().as_bytes()).await;
        let _ = self.orders.flush().await;
    }

    /// Sends `signal` to the command's process group.
    pub(crate) fn signal(&self, signal: Signal) {
        let _ = kill_process_group(self.group, signal);
    }

    /// Reaps the supervisor process after its last report.
    pub(crate) async fn finish(mut self) {
        let _ = self.process.wait().await;
    }
}
