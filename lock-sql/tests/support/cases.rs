//! SQL-specific cases every dialect runs: stale holders, pool exhaustion, waits bounded by the
//! lease, fencing across reconnects, table options.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lock_core::{AcquireOptions, Backoff, DistributedLockExt, ErrorKind};
use lock_sql::SqlLock;
use lock_testkit::{scaled, scaled_ms};
use tokio::time::Instant;

use super::{SqlTarget, unique};

fn options(wait: Duration, lease: Duration, auto_renew: bool) -> AcquireOptions {
    AcquireOptions::builder()
        .wait(wait)
        .lease(lease)
        .auto_renew(auto_renew)
        .build()
        .expect("valid options")
}

/// A backoff so slow that a waiter relying on it alone would miss every deadline below.
fn glacial() -> Backoff {
    Backoff::exponential(Duration::from_secs(30), Duration::from_secs(30)).expect("backoff")
}

/// A holder whose lease ran out and was taken over: its lost signal has fired, it cannot
/// extend or release, the new holder (with a larger fencing token) keeps the lock. Then the
/// same with the row severed while the stale holder still believes it holds: its extend
/// reaches the database and is refused.
pub(crate) async fn stale_holder_cannot_release_or_extend(target: &SqlTarget) {
    let (a, b, c) = (
        target.lock().await,
        target.lock().await,
        target.lock().await,
    );
    let name = unique("stale");
    let lease = scaled_ms(800);
    let stale = a
        .acquire_with_options(&name, &options(scaled_ms(5000), lease, false))
        .await
        .expect("acquire")
        .expect("free lock");
    let fresh = b
        .acquire_with_options(&name, &options(scaled_ms(10_000), scaled_ms(30_000), true))
        .await
        .expect("takeover")
        .expect("the expired lease was not taken over");
    assert!(fresh.fencing_token() > stale.fencing_token());
    assert!(
        stale.is_lost(),
        "the stale holder's lost signal did not fire"
    );
    let error = stale
        .extend(lease)
        .await
        .expect_err("stale extend succeeded");
    assert_eq!(error.kind(), ErrorKind::Lost, "{error}");
    let error = stale.release().await.expect_err("stale release succeeded");
    assert_eq!(error.kind(), ErrorKind::NotHeld, "{error}");
    assert!(
        c.try_acquire(&name).await.expect("try").is_none(),
        "stale release freed the lock"
    );
    assert!(!fresh.is_lost());

    // The stale holder does not know yet: its long lease has not run out locally.
    let believer = fresh;
    assert!(target.lock().await.sever(&name).await.expect("sever"));
    let newest = c
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire after sever");
    assert!(newest.fencing_token() > believer.fencing_token());
    assert!(!believer.is_lost(), "nothing has told the believer yet");
    let error = believer
        .extend(scaled_ms(60_000))
        .await
        .expect_err("extend of a lost hold");
    assert_eq!(error.kind(), ErrorKind::Lost, "{error}");
    assert!(
        believer.is_lost(),
        "a refused extend did not fire the lost signal"
    );
    let error = believer
        .release()
        .await
        .expect_err("release of a lost hold");
    assert_eq!(error.kind(), ErrorKind::NotHeld, "{error}");
    assert!(
        a.try_acquire(&name).await.expect("try").is_none(),
        "the newest hold was freed"
    );
    newest.release().await.expect("newest release");
}

/// Holds do not keep pool connections: with a pool of 2, five holders renew their leases
/// through several lease lengths, another name is still acquirable, and five tasks contend
/// for one name without overlapping.
pub(crate) async fn small_pool_serves_more_holders_than_connections(target: &SqlTarget) {
    let lock = SqlLock::builder(&target.url)
        .pool_size(2)
        .connect()
        .await
        .expect("connect");
    let lease = scaled_ms(600);
    let mut guards = Vec::new();
    for holder in 0..5 {
        let name = unique(&format!("pool/holder{holder}"));
        let holding = options(scaled_ms(5000), lease, true);
        let guard = lock.acquire_with_options(&name, &holding).await;
        guards.push(guard.expect("acquire").expect("free name"));
    }
    tokio::time::sleep(lease * 3).await;
    assert!(
        guards.iter().all(|guard| !guard.is_lost()),
        "a renewal starved for a connection"
    );
    let extra = lock
        .acquire_timeout(unique("pool/extra"), scaled_ms(5000))
        .await;
    extra
        .expect("a sixth name with five holds and two connections")
        .release()
        .await
        .expect("release");

    let (name, inside, overlaps) = (
        unique("pool/contended"),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let tasks: Vec<_> = (0..5)
        .map(|_| {
            let (lock, name, inside, overlaps) = (
                lock.clone(),
                name.clone(),
                Arc::clone(&inside),
                Arc::clone(&overlaps),
            );
            tokio::spawn(async move {
                for _ in 0..10 {
                    let guard = lock
                        .acquire_timeout(&name, scaled_ms(60_000))
                        .await
                        .expect("acquire");
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    guard.release().await.expect("release");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("contender");
    }
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "holders overlapped");
    for guard in guards {
        assert!(!guard.is_lost());
        guard.release().await.expect("release");
    }
}

/// A waiter whose backoff alone would sleep 30 s gets the lock right after the holder's lease
/// ends: its pause is bounded by the remaining lease the acquire statement reports.
pub(crate) async fn wait_is_bounded_by_the_remaining_lease(target: &SqlTarget) {
    let (a, b) = (target.lock().await, target.lock().await);
    let name = unique("bounded_wait");
    let lease = scaled_ms(1000);
    let _held = a
        .acquire_with_options(&name, &options(scaled_ms(5000), lease, false))
        .await
        .expect("acquire")
        .expect("free");
    let started = Instant::now();
    let waiting = AcquireOptions::builder()
        .wait(scaled_ms(20_000))
        .backoff(glacial())
        .build()
        .expect("options");
    let guard = b
        .acquire_with_options(&name, &waiting)
        .await
        .expect("acquire");
    let waited = started.elapsed();
    guard
        .expect("the lease ended but the waiter kept waiting")
        .release()
        .await
        .expect("release");
    assert!(
        waited <= lease + scaled_ms(1000),
        "waited {waited:?} for a {lease:?} lease"
    );
}

/// Fencing tokens keep rising across releases, new connections and severed holds.
pub(crate) async fn fencing_survives_reconnects_and_severs(target: &SqlTarget) {
    let name = unique("fencing_reconnect");
    let mut last = 0;
    for round in 0..6 {
        let lock = target.lock().await;
        let guard = lock
            .acquire_timeout(&name, scaled_ms(5000))
            .await
            .expect("acquire");
        assert!(
            guard.fencing_token() > last,
            "round {round}: token {} after {last}",
            guard.fencing_token()
        );
        last = guard.fencing_token();
        if round % 2 == 0 {
            guard.release().await.expect("release");
        } else {
            assert!(lock.sever(&name).await.expect("sever"));
            drop(guard);
        }
    }
}

/// `table` picks another table, created on connect; the same name in two tables is two
/// locks. A table name that is not a plain identifier is refused before any I/O.
pub(crate) async fn table_option_separates_locks(target: &SqlTarget) {
    let separator = if target.url.contains('?') { '&' } else { '?' };
    let other_url = format!("{}{separator}table=distlock_other", target.url);
    let (main, other) = (
        target.lock().await,
        SqlLock::builder(&other_url)
            .connect()
            .await
            .expect("connect"),
    );
    assert_eq!(other.table().as_str(), "distlock_other");
    let name = unique("tables");
    let first = main
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free in main table");
    let second = other
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free in other table");
    first.release().await.expect("release");
    second.release().await.expect("release");
    let bad = format!("{}{separator}table=x%3BDROP", target.url);
    let started = Instant::now();
    let error = SqlLock::builder(&bad)
        .connect()
        .await
        .expect_err("bad table accepted");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    assert!(started.elapsed() < scaled(Duration::from_millis(200)));
}

/// The lock table restored from an older backup (here: the fencing counter set back to what it
/// was two grants ago): the next token is still larger than every token handed out before,
/// because tokens never fall below the database clock in microseconds. The restored server's
/// clock has moved past the last grant's tick (a millisecond on SQLite), as a real restore's
/// has: within one tick the clock floor cannot tell grants apart.
pub(crate) async fn tokens_rise_after_a_restore_from_an_older_snapshot(target: &SqlTarget) {
    let lock = target.lock().await;
    let name = unique("restore");
    let mut tokens = Vec::new();
    for _ in 0..5 {
        let guard = lock
            .acquire_timeout(&name, scaled_ms(5000))
            .await
            .expect("acquire");
        tokens.push(guard.fencing_token());
        guard.release().await.expect("release");
    }
    tokio::time::sleep(Duration::from_millis(3)).await;
    target
        .admin()
        .await
        .set_fence(name.as_str(), tokens[2])
        .await;
    let after = lock
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let highest = tokens.iter().max().copied().unwrap_or_default();
    assert!(
        after.fencing_token() > highest,
        "token {} after the restore repeats or falls below one of {tokens:?}",
        after.fencing_token()
    );
    after.release().await.expect("release");
}
