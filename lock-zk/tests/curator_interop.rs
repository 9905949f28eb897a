//! Interop with Apache Curator's InterProcessMutex on the same path: each side waits for the
//! other. Skipped only when Java or Curator is missing and `LOCK_TEST_REQUIRE` is unset.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout};
use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::scaled_ms;
use support::curator::Curator;
use support::unique;

/// The next line the Curator program prints, within `limit`.
fn next_line(stdout: &mut Option<BufReader<ChildStdout>>, limit: Duration) -> String {
    let mut reader = stdout.take().expect("stdout");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = sender.send((line, reader));
    });
    let (line, reader) = receiver
        .recv_timeout(limit)
        .expect("Curator program went silent");
    *stdout = Some(reader);
    line.trim().to_owned()
}

fn start(curator: &Curator, args: &[&str]) -> (Child, Option<BufReader<ChildStdout>>) {
    let mut child = curator.command(args).spawn().expect("start java");
    let stdout = child.stdout.take().map(BufReader::new);
    (child, stdout)
}

fn hosts(url: &str) -> String {
    url.trim_start_matches("zk://").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn curator_holder_makes_us_wait() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let Some(curator) = Curator::compile() else {
        return;
    };
    let lock = support::connect(&url).await;
    let name = unique("curator-holds");
    let path = lock.lock_path(&name);
    let (mut java, mut stdout) = start(&curator, &["hold", &hosts(&url), &path]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "acquired");
    let attempt = lock.try_acquire(&name).await.expect("try_acquire");
    assert!(attempt.is_none(), "granted while Curator holds the lock");
    let waiting = {
        let name = name.clone();
        tokio::spawn(async move { lock.acquire_timeout(&name, scaled_ms(30_000)).await })
    };
    tokio::time::sleep(scaled_ms(500)).await;
    assert!(
        !waiting.is_finished(),
        "acquired while Curator holds the lock"
    );
    let stdin = java.stdin.as_mut().expect("stdin");
    stdin
        .write_all(b"release\n")
        .expect("tell Curator to release");
    assert_eq!(next_line(&mut stdout, scaled_ms(10_000)), "released");
    let guard = tokio::time::timeout(scaled_ms(5000), waiting)
        .await
        .expect("acquire after Curator released")
        .expect("task")
        .expect("acquire");
    guard.release().await.expect("release");
    let _ = java.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn our_holder_makes_curator_wait() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let Some(curator) = Curator::compile() else {
        return;
    };
    let lock = support::connect(&url).await;
    let name = unique("we-hold");
    let path = lock.lock_path(&name);
    let guard = lock
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let (mut java, mut stdout) = start(&curator, &["try", &hosts(&url), &path, "1000"]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "waiting");
    assert_eq!(
        next_line(&mut stdout, scaled_ms(10_000)),
        "timeout",
        "Curator got a held lock"
    );
    let _ = java.wait();
    let (mut java, mut stdout) = start(&curator, &["try", &hosts(&url), &path, "30000"]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "waiting");
    tokio::time::sleep(scaled_ms(1000)).await;
    guard.release().await.expect("release");
    assert_eq!(
        next_line(&mut stdout, scaled_ms(10_000)),
        "acquired",
        "Curator never got in"
    );
    let _ = java.wait();
}
