//! A PostgreSQL server that stops answering (SIGSTOP): operations fail with `Unavailable`
//! within the operation timeout, a holder's lost signal fires by its lease end, and the
//! service recovers once the server answers again. Runs its own server, since it pauses it.

use lock_core::ServiceBuilder;
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, ErrorKind};
use lock_sql::SqlLock;
use lock_testkit::servers::PostgresServer;
use lock_testkit::{require, scaled_ms};
use tokio::time::Instant;

/// Sends `signal` to the postmaster `pid` and all its children. PostgreSQL backends start
/// sessions of their own, so signalling the postmaster's process group would leave the
/// connected backends answering.
fn signal_server(pid: u32, signal: &str) {
    let mut pids = vec![pid.to_string()];
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // Fields after the command's closing parenthesis: state, then the parent pid.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if parent == Some(pid.to_string().as_str()) {
            pids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .args(&pids)
        .status()
        .expect("kill");
    assert!(status.success(), "kill -{signal} {pids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn paused_server_is_unavailable_in_time_and_holders_learn_of_it() {
    let Some(mut server) = require(PostgresServer::start()) else {
        return;
    };
    let timeout = Duration::from_millis(1000);
    let lock = SqlLock::builder(&server.url())
        .connect_timeout(timeout)
        .operation_timeout(timeout)
        .connect()
        .await
        .expect("connect");
    let lease = scaled_ms(2000);
    let options = AcquireOptions::builder()
        .lease(lease)
        .wait(scaled_ms(5000))
        .build();
    let guard = lock
        .acquire_with_options("paused/held", &options.expect("options"))
        .await
        .expect("acquire")
        .expect("free");
    let held_at = Instant::now();

    let pid = server.process().pid().expect("server pid");
    signal_server(pid, "STOP");
    let started = Instant::now();
    let error = lock
        .acquire_timeout("paused/other", scaled_ms(30_000))
        .await
        .expect_err("acquire on a paused server");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(
        started.elapsed() <= timeout * 2 + scaled_ms(1000),
        "Unavailable after {:?}",
        started.elapsed()
    );
    let lost = tokio::time::timeout(lease + scaled_ms(1000), guard.lost().cancelled()).await;
    assert!(
        lost.is_ok(),
        "the lost signal did not fire within the lease"
    );
    assert!(
        held_at.elapsed() >= lease - scaled_ms(200),
        "lost fired before the lease ended"
    );

    signal_server(pid, "CONT");
    let recovered = lock
        .acquire_timeout("paused/other", scaled_ms(10_000))
        .await;
    recovered
        .expect("acquire after resume")
        .release()
        .await
        .expect("release");
    drop(guard);
}
