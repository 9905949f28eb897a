//! Redlock against 3 and 5 spawned masters: a dead or paused minority is tolerated, a dead
//! majority fails cleanly with nothing left held, and fencing tokens keep rising when different
//! majorities grant.

use lock_core::ServiceBuilder;
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, ErrorKind, LockName};
use lock_redis::{Redlock, redis};
use lock_testkit::servers::RedisServer;
use lock_testkit::{require, scaled_ms};
use tokio::time::Instant;

const TIMEOUT: Duration = Duration::from_millis(300);

fn masters(n: usize) -> Option<Vec<RedisServer>> {
    (0..n).map(|_| require(RedisServer::start())).collect()
}

async fn redlock(masters: &[RedisServer]) -> Redlock {
    let urls: Vec<String> = masters.iter().map(RedisServer::url).collect();
    Redlock::builder(&urls.join(","))
        .connect_timeout(TIMEOUT)
        .operation_timeout(TIMEOUT)
        .connect()
        .await
        .expect("connect redlock")
}

fn lock_name(case: &str) -> LockName {
    LockName::new(format!("redlock/{case}/{:x}", rand::random::<u64>())).expect("valid name")
}

/// Whether any live master still has the lock key.
async fn held_anywhere(masters: &[RedisServer], live: &[usize], key: &str) -> bool {
    for &index in live {
        let mut raw = redis::Client::open(masters[index].url())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        let exists: i64 = redis::cmd("EXISTS")
            .arg(key)
            .query_async(&mut raw)
            .await
            .expect("EXISTS");
        if exists == 1 {
            return true;
        }
    }
    false
}

/// Kills masters one by one: the lock works while a majority lives, then fails with
/// `Unavailable` and leaves nothing held on the survivors.
async fn minority_tolerated_majority_fails_cleanly(n: usize) {
    let Some(mut servers) = masters(n) else {
        return;
    };
    let lock = redlock(&servers).await;
    let other = redlock(&servers).await;
    let name = lock_name("kill");
    let (key, _, _) = lock_redis::RedisLock::builder(&servers[0].url())
        .connect()
        .await
        .expect("connect")
        .keys_for(&name);
    let minority = (n - 1) / 2;
    let mut last_token = 0;
    for dead in 0..=n {
        if dead > 0 {
            servers[dead - 1].process().kill();
        }
        let live: Vec<usize> = (dead..n).collect();
        let outcome = lock.acquire_timeout(&name, scaled_ms(3000)).await;
        if dead <= minority {
            let guard = outcome.unwrap_or_else(|e| panic!("{dead} of {n} dead: {e}"));
            assert!(
                guard.fencing_token() > last_token,
                "fencing token did not rise"
            );
            last_token = guard.fencing_token();
            assert!(
                other.try_acquire(&name).await.expect("try").is_none(),
                "{dead} of {n} dead: two holders"
            );
            guard.release().await.expect("release");
        } else {
            let error = outcome.expect_err("granted without a majority");
            assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
            assert!(
                !held_anywhere(&servers, &live, &key).await,
                "{dead} of {n} dead: the failed acquire left the key on a live master"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_masters_survive_one_dead_and_fail_cleanly_with_two() {
    minority_tolerated_majority_fails_cleanly(3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_masters_survive_two_dead_and_fail_cleanly_with_three() {
    minority_tolerated_majority_fails_cleanly(5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_minority_delays_acquire_by_at_most_the_command_timeout() {
    let Some(mut servers) = masters(5) else {
        return;
    };
    let lock = redlock(&servers).await;
    servers[0].process().pause().expect("SIGSTOP");
    servers[3].process().pause().expect("SIGSTOP");
    for round in 0..3 {
        let started = Instant::now();
        let guard = lock
            .try_acquire(lock_name("paused"))
            .await
            .expect("acquire with a paused minority")
            .expect("free lock");
        let elapsed = started.elapsed();
        assert!(
            elapsed <= TIMEOUT + scaled_ms(200),
            "round {round}: acquire took {elapsed:?} with a paused minority (timeout {TIMEOUT:?})"
        );
        guard.release().await.expect("release");
    }
    servers[0].process().resume().expect("SIGCONT");
    servers[3].process().resume().expect("SIGCONT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_tokens_rise_across_different_majorities() {
    let Some(servers) = masters(3) else { return };
    let lock = redlock(&servers).await;
    let name = lock_name("fencing");
    let (key, _, _) = lock_redis::RedisLock::builder(&servers[0].url())
        .connect()
        .await
        .expect("connect")
        .keys_for(&name);
    let mut tokens = Vec::new();
    // A foreign key on one master keeps it out of the majority (its counter stays put): grant
    // on {A, B} four times, then on {A, C}, then on {B, C}. Without keeping the counters in
    // step, C's stale counter would make the {B, C} grant repeat an earlier token.
    for (blocked, grants) in [(2, 4), (1, 1), (0, 1)] {
        let mut raw = redis::Client::open(servers[blocked].url())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        let _: () = redis::cmd("SET")
            .arg(&key)
            .arg("foreign")
            .arg("PX")
            .arg(60_000)
            .query_async(&mut raw)
            .await
            .expect("SET");
        for _ in 0..grants {
            let guard = lock
                .try_acquire(&name)
                .await
                .expect("acquire")
                .expect("free lock");
            tokens.push(guard.fencing_token());
            guard.release().await.expect("release");
        }
        let _: i64 = redis::cmd("DEL")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .expect("DEL");
    }
    assert!(
        tokens.windows(2).all(|pair| pair[0] < pair[1]),
        "fencing tokens did not strictly rise across majorities: {tokens:?}"
    );
    assert!(
        !lock.capabilities().server_side_wait,
        "Redlock polls; it must not claim otherwise"
    );
}

/// With the default 5 s command timeout and a lease far shorter than it, a paused master must
/// not stall rounds past the lease: acquisitions succeed within half the lease and renewals
/// keep the hold for several leases, decided by the answering majority.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_master_cannot_stall_rounds_past_a_short_lease() {
    let Some(mut servers) = masters(3) else {
        return;
    };
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let lock = Redlock::builder(&urls.join(","))
        .connect()
        .await
        .expect("connect redlock with default timeouts");
    let lease = Duration::from_millis(800);
    let options = lock_core::AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .lease(lease)
        .build()
        .expect("options");
    servers[1].process().pause().expect("SIGSTOP");
    let started = Instant::now();
    let guard = lock
        .acquire_timeout_with(lock_name("paused-short-lease"), &options)
        .await
        .expect("acquire with one of three masters paused");
    let elapsed = started.elapsed();
    assert!(
        elapsed <= lease / 2 + scaled_ms(300),
        "acquire took {elapsed:?}; a paused master stalled the round past half the {lease:?} lease"
    );
    tokio::time::sleep(lease * 3).await;
    assert!(
        !guard.is_lost(),
        "renewal rounds waited on the paused master past the lease"
    );
    guard
        .release()
        .await
        .expect("release by the answering majority");
    servers[1].process().resume().expect("SIGCONT");
}

/// Semaphores and read-write locks are refused with the reason (a bad claim first as bad
/// input), before anything reaches a master: no key of the name exists afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_holds_are_refused_with_the_reason_and_leave_nothing() {
    use lock_core::{RwLockExt, SemaphoreExt};
    let Some(masters) = masters(3) else {
        return;
    };
    let lock = redlock(&masters).await;
    let capabilities = lock.capabilities();
    assert!(!capabilities.semaphore && !capabilities.rw_lock);
    let name = lock_name("shared");
    let bad = lock.try_acquire_permit(&name, 0).await.map(drop);
    assert_eq!(bad.expect_err("0 permits").kind(), ErrorKind::InvalidInput);
    let refusals = [
        (
            lock.try_acquire_permit(&name, 2).await.map(drop),
            "semaphores",
        ),
        (lock.try_read(&name).await.map(drop), "read-write locks"),
        (lock.try_write(&name).await.map(drop), "read-write locks"),
    ];
    for (refusal, primitive) in refusals {
        let error = refusal.expect_err("a Redlock granted a shared hold");
        assert_eq!(error.kind(), ErrorKind::Unsupported, "{error}");
        let message = error.to_string();
        assert!(
            message.contains(primitive) && message.contains("majority"),
            "{message}"
        );
    }
    for master in &masters {
        let mut raw = redis::Client::open(master.url())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg("*")
            .query_async(&mut raw)
            .await
            .expect("KEYS");
        assert!(keys.is_empty(), "keys left on a master: {keys:?}");
    }
}
