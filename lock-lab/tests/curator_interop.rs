//! Interop with Apache Curator's InterProcessMutex, InterProcessReadWriteLock and
//! InterProcessSemaphoreV2 on the same paths: each side waits for the other. Skipped only when Java or Curator is missing and
//! `LOCK_TEST_REQUIRE` is unset.

mod support;

use lock_core::{DistributedLockExt, RwLockExt, SemaphoreExt};
use lock_testkit::intervals::{HoldInterval, occupancy, wall_micros};
use lock_testkit::scaled_ms;
use lock_zk::ZkLock;

use support::{hosts, next_line, release, start, unique};

/// The Curator program of these cases.
const PROGRAM: &str = "CuratorLock";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn curator_holder_makes_us_wait() {
    let Some((server, lock, curator)) = support::setup(PROGRAM).await else {
        return;
    };
    let url = server.url();
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
    release(&mut java, &mut stdout);
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
    let Some((server, lock, curator)) = support::setup(PROGRAM).await else {
        return;
    };
    let url = server.url();
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

/// Curator's InterProcessReadWriteLock and ours share one queue at `rw_lock_path`: a Curator
/// writer keeps our readers and writers out; a Curator reader shares with ours, and our
/// waiting writer holds back a Curator reader that comes after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn curator_read_write_lock_shares_our_queue() {
    let Some((server, lock, curator)) = support::setup(PROGRAM).await else {
        return;
    };
    let hosts = hosts(&server.url());
    let name = unique("rw");
    let path = lock.rw_lock_path(&name);
    let (mut java, mut stdout) = start(&curator, &["hold-write", &hosts, &path]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "acquired");
    assert!(
        lock.try_read(&name).await.expect("try_read").is_none(),
        "read beside Curator's writer"
    );
    assert!(
        lock.try_write(&name).await.expect("try_write").is_none(),
        "write beside Curator's writer"
    );
    release(&mut java, &mut stdout);
    let _ = java.wait();

    let (mut java, mut stdout) = start(&curator, &["hold-read", &hosts, &path]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "acquired");
    let ours = lock
        .try_read(&name)
        .await
        .expect("try_read")
        .expect("readers share");
    ours.release().await.expect("release");
    let writer = {
        let (lock, name) = (lock.clone(), name.clone());
        tokio::spawn(async move { lock.write(&name).await })
    };
    tokio::time::sleep(scaled_ms(500)).await;
    assert!(
        !writer.is_finished(),
        "our writer got in beside Curator's reader"
    );
    let (mut late, mut late_out) = start(&curator, &["try-read", &hosts, &path, "1000"]);
    assert_eq!(next_line(&mut late_out, scaled_ms(30_000)), "waiting");
    assert_eq!(
        next_line(&mut late_out, scaled_ms(10_000)),
        "timeout",
        "a Curator reader went ahead of our waiting writer"
    );
    let _ = late.wait();
    release(&mut java, &mut stdout);
    let _ = java.wait();
    let guard = tokio::time::timeout(scaled_ms(5000), writer)
        .await
        .expect("our writer after Curator's reader left")
        .expect("task")
        .expect("write");
    guard.release().await.expect("release");
}

/// Our write hold keeps Curator's readers out until we release it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn our_writer_makes_curator_readers_wait() {
    let Some((server, lock, curator)) = support::setup(PROGRAM).await else {
        return;
    };
    let hosts = hosts(&server.url());
    let name = unique("we-write");
    let path = lock.rw_lock_path(&name);
    let guard = lock.write(&name).await.expect("write");
    let (mut java, mut stdout) = start(&curator, &["try-read", &hosts, &path, "1000"]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "waiting");
    assert_eq!(
        next_line(&mut stdout, scaled_ms(10_000)),
        "timeout",
        "Curator read beside our writer"
    );
    let _ = java.wait();
    let (mut java, mut stdout) = start(&curator, &["try-read", &hosts, &path, "30000"]);
    assert_eq!(next_line(&mut stdout, scaled_ms(30_000)), "waiting");
    tokio::time::sleep(scaled_ms(1000)).await;
    guard.release().await.expect("release");
    assert_eq!(
        next_line(&mut stdout, scaled_ms(10_000)),
        "acquired",
        "Curator's reader never got in"
    );
    let _ = java.wait();
}

/// Curator's InterProcessSemaphoreV2 and ours share the permits at `semaphore_path`: 3 Curator
/// and 3 distlock contenders (own sessions each) for 5 permits, holds recorded on the wall
/// clock from inside: never more than 5 at once, and all 5 in use at some instant.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn curator_semaphore_shares_our_permits() {
    const PERMITS: u32 = 5;
    const CONTENDERS: usize = 3;
    const ROUNDS: usize = 12;
    const HOLD_MS: u64 = 100;
    let Some((server, lock, curator)) = support::setup(PROGRAM).await else {
        return;
    };
    let name = unique("semaphore");
    let path = lock.semaphore_path(&name);
    let numbers = [
        PERMITS.to_string(),
        CONTENDERS.to_string(),
        ROUNDS.to_string(),
    ];
    let hold_ms = HOLD_MS.to_string();
    let hosts = hosts(&server.url());
    let (mut java, mut stdout) = start(
        &curator,
        &[
            "permits",
            &hosts,
            &path,
            &numbers[0],
            &numbers[1],
            &numbers[2],
            &hold_ms,
        ],
    );
    // Ours start once Curator's first lease is held, so the two sides contend.
    let first = parse_hold(&next_line(&mut stdout, scaled_ms(30_000)));
    let reader = std::thread::spawn(move || stdout.rest());
    let mut ours = Vec::new();
    for _ in 0..CONTENDERS {
        let service = ZkLock::builder(&server.url())
            .connect()
            .await
            .expect("connect");
        let name = name.clone();
        ours.push(tokio::spawn(async move {
            let mut holds = Vec::new();
            for _ in 0..ROUNDS {
                let permit = service
                    .acquire_permit(&name, PERMITS)
                    .await
                    .expect("permit");
                let start_micros = wall_micros();
                tokio::time::sleep(std::time::Duration::from_millis(HOLD_MS)).await;
                let end_micros = wall_micros();
                holds.push(HoldInterval {
                    start_micros,
                    end_micros,
                    exclusive: false,
                });
                permit.release().await.expect("release");
            }
            holds
        }));
    }
    let mut holds = vec![first];
    for task in ours {
        holds.extend(task.await.expect("our contender"));
    }
    let lines = reader.join().expect("reader");
    assert!(
        java.wait().expect("java").success(),
        "Curator failed: {lines:?}"
    );
    assert_eq!(lines.last().map(String::as_str), Some("done"), "{lines:?}");
    let theirs: Vec<HoldInterval> = lines
        .iter()
        .filter(|l| l.starts_with("held"))
        .map(|l| parse_hold(l))
        .collect();
    assert_eq!(
        theirs.len() + 1,
        CONTENDERS * ROUNDS,
        "Curator's holds: {lines:?}"
    );
    holds.extend(theirs);
    let seen = occupancy(&holds);
    assert_eq!(
        seen.max_holders, PERMITS as usize,
        "most holders at once with {PERMITS} permits shared by Curator and distlock"
    );
}

/// A `held <start µs> <end µs>` line of the Curator program, as a shared hold.
fn parse_hold(line: &str) -> HoldInterval {
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|field| field.parse().expect("a number"))
        .collect();
    assert!(
        line.starts_with("held ") && fields.len() == 2,
        "not a hold: {line:?}"
    );
    HoldInterval {
        start_micros: fields[0],
        end_micros: fields[1],
        exclusive: false,
    }
}
