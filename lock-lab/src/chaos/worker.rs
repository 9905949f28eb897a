//! A `lock-holder work` process seen from the trial: its reported events, signals, stdin.

use std::io::{BufRead, BufReader, Write as _};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process};

use crate::fence::{HoldEvent, monotonic_ns};

/// One holder process. Killed on drop.
#[derive(Debug)]
pub(crate) struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Arc<Mutex<Vec<String>>>,
    killed_ns: Option<u64>,
}

/// How a holder's hold went, from its own report.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub(crate) granted: Option<(u64, u64)>,
    pub(crate) refused: Option<String>,
    pub(crate) lost_ns: Option<u64>,
    pub(crate) released_ns: Option<u64>,
    pub(crate) killed_ns: Option<u64>,
}

impl Report {
    /// The hold's events for the history, in the order they happened.
    pub(crate) fn events(&self) -> Vec<(HoldEvent, u64)> {
        let mut events = Vec::new();
        if let Some((token, at)) = self.granted {
            events.push((HoldEvent::Granted(token), at));
        }
        if let Some(at) = self.lost_ns {
            events.push((HoldEvent::Lost, at));
        }
        if let Some(at) = self.released_ns {
            events.push((HoldEvent::Released, at));
        }
        if let Some(at) = self.killed_ns {
            events.push((HoldEvent::Killed, at));
        }
        events
    }
}

impl Worker {
    /// Starts `lock-holder work` with these parameters: the lock `name`, or with `claim`, a
    /// permit or read-write hold of it.
    pub(crate) fn spawn(
        holder: &std::path::Path,
        url: &str,
        (name, claim): (&str, Option<&str>),
        (lease, wait, hold): (Duration, Duration, Duration),
        fence: SocketAddr,
        client: usize,
    ) -> Result<Self, String> {
        let ms = |d: Duration| d.as_millis().to_string();
        let mut child = Command::new(holder)
            .args(["work", url, name, &ms(lease), &ms(wait), &ms(hold)])
            .arg(fence.to_string())
            .arg(client.to_string())
            .args(claim)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| format!("spawn lock-holder: {error}"))?;
        let stdout = child.stdout.take().ok_or("lock-holder has no stdout")?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(line);
            }
        });
        Ok(Self {
            stdin: child.stdin.take(),
            child,
            lines,
            killed_ns: None,
        })
    }

    /// What the process has reported so far.
    pub(crate) fn report(&self) -> Report {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        let mut report = Report {
            killed_ns: self.killed_ns,
            ..Report::default()
        };
        for line in lines.iter() {
            let fields: Vec<&str> = line.splitn(3, ' ').collect();
            let number = |index: usize| fields.get(index).and_then(|f| f.parse::<u64>().ok());
            match fields.first().copied() {
                Some("granted") => report.granted = number(1).zip(number(2)),
                Some("refused") => report.refused = Some(fields.get(2).unwrap_or(&"").to_string()),
                Some("lost") => report.lost_ns = number(1),
                Some("released") => report.released_ns = number(1),
                _ => {}
            }
        }
        report
    }

    /// Waits until the report satisfies `done` or `limit` passes; returns the last report.
    pub(crate) async fn wait_for(&self, limit: Duration, done: impl Fn(&Report) -> bool) -> Report {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let report = self.report();
            if done(&report) || tokio::time::Instant::now() >= deadline {
                return report;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits for a grant or a refusal.
    pub(crate) async fn wait_granted(&self, limit: Duration) -> Report {
        self.wait_for(limit, |r| r.granted.is_some() || r.refused.is_some())
            .await
    }

    /// Waits until the hold ended (lost, released) or never began (refused).
    pub(crate) async fn wait_ended(&self, limit: Duration) -> Report {
        self.wait_for(limit, |r| {
            r.refused.is_some() || r.lost_ns.is_some() || r.released_ns.is_some()
        })
        .await
    }

    fn signal(&self, signal: Signal) -> Result<(), String> {
        let pid = i32::try_from(self.child.id())
            .ok()
            .and_then(Pid::from_raw)
            .ok_or("no holder pid")?;
        kill_process(pid, signal).map_err(|error| format!("signal holder: {error}"))
    }

    /// SIGSTOP: the whole process, lease renewal included, stops.
    pub(crate) fn pause(&self) -> Result<(), String> {
        self.signal(Signal::STOP)
    }

    /// SIGCONT.
    pub(crate) fn resume(&self) -> Result<(), String> {
        self.signal(Signal::CONT)
    }

    /// SIGKILL, recording the moment as the end of the holder's belief.
    pub(crate) fn kill(&mut self) {
        if self.killed_ns.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            self.killed_ns = Some(monotonic_ns());
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Asks the holder to release (it ignores this once its hold ended).
    pub(crate) fn release(&mut self) {
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = stdin.write_all(b"release\n");
            let _ = stdin.flush();
        }
    }

    /// Waits up to `limit` for the process to exit on its own; returns whether it did.
    pub(crate) async fn wait_exit(&mut self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while tokio::time::Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        false
    }

    /// Waits up to `limit` for the process to exit on its own, then kills it; returns its
    /// report. A kill here only ends a process that outstayed its trial (it is not recorded as
    /// the end of a hold unless the hold was still open).
    pub(crate) async fn finish(mut self, limit: Duration) -> Report {
        self.wait_exit(limit).await;
        let _ = self.resume();
        self.kill();
        // Let the reader thread take the last lines.
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.report()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.resume();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
