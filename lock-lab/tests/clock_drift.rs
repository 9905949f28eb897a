//! The clock drift margin, against a holder whose clock really runs slow: `lock-holder lease`
//! under libfaketime at 0.95 of real speed (its monotonic clock too) holds a 2 s Redis lease
//! without renewing; a client with a true clock waits for the lock. Without a margin the slow
//! holder counts its lease as ending about 100 ms after the server ended it, so the waiter is
//! granted first; with a margin of 10 % of the lease its lost signal fires first.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use distlock::DistributedLockExt;
use lock_lab::chaos::LIBFAKETIME;
use lock_testkit::servers::RedisServer;
use lock_testkit::{require, scaled_ms};
use tokio::time::Instant;

const LEASE: Duration = Duration::from_millis(2000);

/// Holds `name` for one unrenewed lease in a holder whose clock runs at `speed`, with
/// `clock_drift` as its margin; returns (when its lost signal fired, when another client was
/// granted the lock), on the true clock.
async fn race(url: &str, speed: &str, clock_drift: &str) -> Option<(Instant, Instant)> {
    if !Path::new(LIBFAKETIME).is_file() {
        assert!(
            !lock_testkit::servers_required(),
            "{LIBFAKETIME} is missing: run scripts/install-servers"
        );
        eprintln!("SKIPPED: {LIBFAKETIME} is missing (run scripts/install-servers)");
        return None;
    }
    let name = format!("drift/{:016x}", rand::random::<u64>());
    let holder_url = format!("{url}?clock_drift={clock_drift}");
    // libfaketime preloaded directly (not through the `faketime` wrapper, whose leftover
    // semaphores can stop it from starting): both the wall and the monotonic clock run at
    // `speed`.
    let mut holder = Command::new(env!("CARGO_BIN_EXE_lock-holder"))
        .args(["lease", &holder_url, &name, &LEASE.as_millis().to_string()])
        .env("LD_PRELOAD", LIBFAKETIME)
        .env("FAKETIME", format!("+0 x{speed}"))
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "0")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the holder under libfaketime");
    let mut lines = BufReader::new(holder.stdout.take().expect("stdout")).lines();
    let acquired = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(
        acquired.starts_with("acquired"),
        "the holder said {acquired:?}"
    );
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let line = lines.next().and_then(Result::ok).unwrap_or_default();
        let _ = sender.send((Instant::now(), line));
    });
    let waiter = distlock::connect(url).await.expect("connect");
    let guard = waiter
        .acquire_timeout(&name, scaled_ms(10_000))
        .await
        .expect("acquire");
    let granted = Instant::now();
    let (lost, line) = tokio::time::timeout(scaled_ms(10_000), receiver)
        .await
        .expect("the holder's lost signal")
        .expect("reader thread");
    assert_eq!(line, "lost");
    guard.release().await.expect("release");
    let _ = holder.wait();
    Some((lost, granted))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_holder_clock_is_covered_by_the_drift_margin() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    // The hazard, shown: no margin, and the slow holder believes it holds after the waiter got it.
    let Some((lost, granted)) = race(&server.url(), "0.95", "0").await else {
        return;
    };
    assert!(
        lost > granted,
        "without a margin the slow holder's lost signal came {:?} before the next grant; the \
         clock was not slowed",
        granted - lost
    );
    eprintln!("no margin: lost {:?} after the next grant", lost - granted);
    // The margin: 10 % of the lease covers a clock 5 % slow.
    let Some((lost, granted)) = race(&server.url(), "0.95", "0.1").await else {
        return;
    };
    assert!(
        lost < granted,
        "with a 10 % margin the slow holder's lost signal came {:?} after the next grant",
        lost - granted
    );
    eprintln!(
        "10 % margin: lost {:?} before the next grant",
        granted - lost
    );
    // A fast holder clock is the safe direction: its signal fires early even without a margin.
    let Some((lost, granted)) = race(&server.url(), "1.05", "0").await else {
        return;
    };
    assert!(
        lost < granted,
        "a fast clock fired {:?} late",
        lost - granted
    );
}
