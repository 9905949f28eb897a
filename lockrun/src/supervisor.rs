//! The supervisor: a process of its own between lockrun and the command, so the command is
//! stopped in time even when lockrun cannot act (killed with SIGKILL, frozen by SIGSTOP).
//!
//! It starts the command in a new process group (through [`crate::exec`], which ties the
//! command's life to the supervisor's), and stops that whole group (SIGTERM, then SIGKILL
//! after the grace period) when lockrun orders it, when the deadline (the at-risk point)
//! lockrun last reported passes without a newer one (lockrun is frozen or its renewals fail),
//! or when lockrun's end of the socket closes (lockrun died). It also stops what the command
//! left in its group when the command exits by itself, so no grandchild outlives the hold.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::process::{Child, Command};
use tokio::signal::unix::{SignalKind, signal};

use crate::control::{Order, Report, until_monotonic_ns};
use crate::exit;

/// The hidden first argument that runs lockrun as the supervisor:
/// `lockrun __lockrun-supervise SOCKET GRACE_MS STOP_AT_NS -- COMMAND...`, where
/// `STOP_AT_NS` is the hold's deadline (its at-risk point) when the supervisor was started, so
/// the command never runs without a deadline, even if lockrun is frozen before it can send one.
pub(crate) const ARG: &str = "__lockrun-supervise";

/// Runs the supervisor; returns its own exit status (the command's goes over the socket).
pub(crate) fn main(args: &[OsString]) -> u8 {
    let [socket, grace, stop_at, separator, command @ ..] = args else {
        return exit::USAGE;
    };
    let number = |arg: &OsString| arg.to_str().and_then(|n| n.parse::<u64>().ok());
    let (Some(grace), Some(stop_at), true) = (number(grace), number(stop_at), separator == "--")
    else {
        return exit::USAGE;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(supervise(
            PathBuf::from(socket),
            Duration::from_millis(grace),
            stop_at,
            command.to_vec(),
        )),
        Err(_) => exit::SOFTWARE,
    }
}

async fn supervise(socket: PathBuf, grace: Duration, stop_at: u64, command: Vec<OsString>) -> u8 {
    // Handled, so they do not end the supervisor: SIGTERM, SIGINT and SIGHUP are for the
    // command, and lockrun sends them to its group.
    let _handled = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    );
    let Ok(stream) = UnixStream::connect(&socket).await else {
        return exit::SOFTWARE;
    };
    let (read, mut write) = stream.into_split();
    let mut orders = BufReader::new(read).lines();
    let mut child = match start(&command) {
        Ok(child) => child,
        Err(error) => {
            eprintln!("lockrun: cannot start the command: {error}");
            let _ = send(&mut write, Report::Exited(exit::SOFTWARE)).await;
            return exit::SOFTWARE;
        }
    };
    let Some(group) = child.id().and_then(|id| Pid::from_raw(id as i32)) else {
        return exit::SOFTWARE;
    };
    if send(&mut write, Report::Started(group.as_raw_nonzero().get()))
        .await
        .is_err()
    {
        stop_group(group, &mut child, grace).await;
        return exit::SOFTWARE;
    }
    let mut stop_at = stop_at;
    loop {
        let deadline = tokio::time::sleep(until_monotonic_ns(stop_at));
        tokio::select! {
            status = child.wait() => {
                let status = status.map_or(exit::SOFTWARE, exit::for_child);
                // Whatever the command left running in its group goes with it.
                stop_group(group, &mut child, grace).await;
                let _ = send(&mut write, Report::Exited(status)).await;
                return 0;
            }
            order = orders.next_line() => match order {
                Ok(Some(line)) => match Order::parse(&line) {
                    Some(Order::StopAt(at)) => stop_at = at,
                    Some(Order::Stop) => break,
                    None => {}
                },
                // lockrun is gone: nobody holds the lock for the command any more.
                _ => {
                    stop_group(group, &mut child, grace).await;
                    return 0;
                }
            },
            () = deadline => break,
        }
    }
    stop_group(group, &mut child, grace).await;
    let _ = send(&mut write, Report::Stopped).await;
    0
}

/// Starts the command in a new process group, through `lockrun __lockrun-exec`.
fn start(command: &[OsString]) -> std::io::Result<Child> {
    let me = std::env::current_exe()?;
    Command::new(me)
        .arg(crate::exec::ARG)
        .arg(std::process::id().to_string())
        .arg("--")
        .args(command)
        .process_group(0)
        .spawn()
}

/// Stops every process of `group`: SIGTERM, then SIGKILL to whatever is left after `grace`.
/// Returns once the group is empty.
async fn stop_group(group: Pid, child: &mut Child, grace: Duration) {
    let _ = kill_process_group(group, Signal::TERM);
    let killed_at = tokio::time::Instant::now() + grace;
    let mut killed = false;
    loop {
        let _ = child.try_wait();
        if !group_alive(group) {
            return;
        }
        if !killed && tokio::time::Instant::now() >= killed_at {
            eprintln!("lockrun: the command ignored SIGTERM for {grace:?}; sending SIGKILL");
            let _ = kill_process_group(group, Signal::KILL);
            killed = true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn send(write: &mut OwnedWriteHalf, report: Report) -> std::io::Result<()> {
    write.write_all(report.line().as_bytes()).await?;
    write.flush().await
}

/// Whether a process of `group` still runs. Zombies do not count: they run nothing, and an
/// orphaned one waits for whoever reaps orphans here.
fn group_alive(group: Pid) -> bool {
    let group = group.as_raw_nonzero().get();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            return false;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // After the command name in parentheses: state, parent pid, process group.
        let fields: Vec<&str> = stat
            .rfind(')')
            .map(|end| stat[end + 1..].split_whitespace().collect())
            .unwrap_or_default();
        match (
            fields.first(),
            fields.get(2).and_then(|g| g.parse::<i32>().ok()),
        ) {
            (Some(state), Some(pgrp)) => pgrp == group && !matches!(*state, "Z" | "X"),
            _ => false,
        }
    })
}
