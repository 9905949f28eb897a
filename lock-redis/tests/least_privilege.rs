//! A Redis ACL user limited to what the lock needs: its key prefix, its channels, and the
//! commands of the scripts (the minimal ACL the README documents, as applied here). The whole
//! conformance suite runs as that user; a user without `EVALSHA` is refused before anything
//! is granted, with an error naming the command; a permission revoked mid-hold raises the lost
//! signal.

mod support;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLock, ErrorKind, LockName};
use lock_redis::RedisLock;
use lock_testkit::servers::RedisServer;
use lock_testkit::{ConformanceTarget, require};
use support::target::RedisTarget;

/// The key prefix the limited user may use.
const PREFIX: &str = "app";

/// The rules of the minimal ACL for prefix `app`, as the README gives them.
const MINIMAL: &str = "resetkeys ~{app:* resetchannels &{app:* -@all \
     +evalsha +eval +script|load +ping +hello +info +scan +wait \
     +subscribe +unsubscribe +ssubscribe +sunsubscribe +publish +spublish +time \
     +get +set +del +exists +pexpire +pttl +incr \
     +hget +hmget +hset +hdel \
     +zadd +zrem +zrange +zrangebyscore +zscore +zcard +zcount";

/// A server with the users `locker` (the minimal ACL) and `noscript` (the same, without
/// `EVALSHA` and `EVAL`).
fn server() -> Option<&'static RedisServer> {
    static SERVER: OnceLock<Option<RedisServer>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let server = require(RedisServer::start())?;
            for user in [
                format!("ACL SETUSER locker on >locker-pw {MINIMAL}"),
                format!("ACL SETUSER noscript on >noscript-pw {MINIMAL} -evalsha -eval"),
            ] {
                let reply = server.command(&user).ok()?;
                assert!(reply.starts_with("+OK"), "{user}: {reply}");
            }
            Some(server)
        })
        .as_ref()
}

fn url(user: &str) -> Option<String> {
    let port = server()?.port();
    Some(format!("redis://{user}:{user}-pw@127.0.0.1:{port}"))
}

async fn limited() -> Option<Arc<dyn ConformanceTarget>> {
    let params = format!("prefix={PREFIX}");
    // Keys are deleted behind the lock's back by the default (unlimited) user.
    let admin = Some(server()?.url());
    Some(Arc::new(RedisTarget::new(url("locker")?, params, admin)))
}

mod conformance {
    use super::*;

    lock_testkit::conformance_tests!(limited());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_without_evalsha_is_refused_naming_it_and_nothing_is_granted() {
    let Some(url) = url("noscript") else { return };
    let lock = RedisLock::builder(&format!("{url}?prefix={PREFIX}"))
        .connect()
        .await
        .expect("connect: the connection itself is allowed");
    let name = LockName::new("least-privilege/refused").expect("name");
    let error = lock
        .acquire_with(&name, &AcquireOptions::default())
        .await
        .expect_err("granted without EVALSHA");
    assert_eq!(error.kind(), ErrorKind::Backend, "{error}");
    // The message itself, not only the server's reply attached as its source.
    let message = error.message();
    assert!(
        message.contains("lacks a permission") && message.contains("'evalsha'"),
        "the error does not name the permission: {error}"
    );
    let (key, _, _) = lock.keys_for(&name);
    let exists = server()
        .and_then(|server| server.command(&format!("EXISTS {key}")).ok())
        .unwrap_or_default();
    assert!(exists.starts_with(":0"), "a key was left: {exists}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_revoked_mid_hold_raises_the_lost_signal() {
    let Some(server) = server() else { return };
    server
        .command(&format!("ACL SETUSER revoked on >revoked-pw {MINIMAL}"))
        .expect("ACL SETUSER");
    let url = format!(
        "redis://revoked:revoked-pw@127.0.0.1:{}?prefix={PREFIX}",
        server.port()
    );
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let options = AcquireOptions::builder()
        .lease(Duration::from_millis(1500))
        .build()
        .expect("options");
    let name = LockName::new("least-privilege/revoked").expect("name");
    let guard = lock
        .acquire_with(&name, &options)
        .await
        .expect("acquire")
        .expect("granted");
    let revoked = server
        .command("ACL SETUSER revoked -evalsha -eval")
        .expect("ACL SETUSER");
    assert!(revoked.starts_with("+OK"), "{revoked}");
    let at_risk = tokio::time::timeout(Duration::from_secs(5), guard.at_risk().cancelled());
    assert!(at_risk.await.is_ok(), "at risk never fired");
    let lost = tokio::time::timeout(Duration::from_secs(5), guard.lost().cancelled());
    assert!(lost.await.is_ok(), "the lost signal never fired");
    drop(guard);
    let _: &dyn DistributedLock = &lock;
}
