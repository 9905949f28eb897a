//! `rediss://` with a private CA and the certificates it must refuse, and ACL users with
//! passwords from the URL.

use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind, ServiceBuilder};
use lock_testkit::servers::RedisServer;
use lock_testkit::tls::TestPki;
use lock_testkit::{require, scaled_ms};

/// Connecting to `url` with `builder`'s settings fails with `Unavailable` within the connect
/// timeout, and the error (with its cause) mentions `cause`.
async fn refused(
    builder: lock_redis::RedisLockBuilder<lock_redis::RedisLock>,
    url: &str,
    cause: &str,
) {
    let started = std::time::Instant::now();
    let error = builder
        .connect_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect_err("connected despite the TLS fault");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{url}: {error}");
    let shown = format!("{error:?}").to_lowercase();
    assert!(shown.contains(cause), "{url}: no {cause:?} in {error:?}");
    assert!(
        started.elapsed() < scaled_ms(3000),
        "{url}: took {:?}",
        started.elapsed()
    );
}

/// A private CA given as PEM to the builder; a certificate for another host or an expired one
/// is refused, whichever CA signed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rediss_checks_the_host_name_and_the_expiry() {
    let Some(pki) = require(TestPki::generate()) else {
        return;
    };
    let ca = std::fs::read(pki.ca()).expect("read the CA");
    let Some(good) = require(RedisServer::start_tls(&pki.server_tls(pki.server(), false))) else {
        return;
    };
    let url = good.tls_url().expect("TLS port");
    let lock = lock_redis::RedisLock::builder(&url)
        .tls_root_certificate(ca.clone())
        .connect()
        .await
        .expect("TLS connect with the CA from the builder");
    let held = lock.try_acquire("tls").await.expect("try").expect("free");
    held.release().await.expect("release");

    for (identity, cause) in [
        (pki.wrong_host(), "not valid for name"),
        (pki.expired(), "expired"),
    ] {
        let Some(server) = require(RedisServer::start_tls(&pki.server_tls(identity, false))) else {
            return;
        };
        let url = server.tls_url().expect("TLS port");
        let builder = lock_redis::RedisLock::builder(&url).tls_root_certificate(ca.clone());
        refused(builder, &url, cause).await;
    }
}

/// TLS spoken to a plaintext port, and plaintext to a TLS port: both refused in time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rediss_and_redis_on_the_wrong_port_fail_in_time() {
    let Some(pki) = require(TestPki::generate()) else {
        return;
    };
    let Some(server) = require(RedisServer::start_tls(&pki.server_tls(pki.server(), false))) else {
        return;
    };
    let tls_port = server.tls_url().expect("TLS port");
    let tls_to_plaintext = format!(
        "rediss://127.0.0.1:{}?tls_ca={}",
        server.port(),
        pki.ca().display()
    );
    let plaintext_to_tls = tls_port.replacen("rediss://", "redis://", 1);
    for url in [tls_to_plaintext, plaintext_to_tls] {
        refused(lock_redis::RedisLock::builder(&url), &url, "").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_user_and_password_come_from_the_url_and_stay_hidden() {
    let args: Vec<String> = ["--user", "locker", "on", ">s3cret-pw", "~*", "&*", "+@all"]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
    let Some(server) = require(RedisServer::start_with(&args)) else {
        return;
    };
    let url = format!("redis://locker:s3cret-pw@127.0.0.1:{}", server.port());
    let lock = lock_redis::RedisLock::builder(&url)
        .connect()
        .await
        .expect("connect as an ACL user");
    let guard = lock.try_acquire("acl").await.expect("try").expect("free");
    assert!(
        server
            .command("ACL LOG")
            .is_ok_and(|log| !log.contains("s3cret")),
        "the ACL log shows a failed attempt"
    );
    guard.release().await.expect("release");
    assert!(
        !format!("{lock:?}").contains("s3cret-pw"),
        "Debug shows the password: {lock:?}"
    );

    let wrong = format!("redis://locker:wrong-pw@127.0.0.1:{}", server.port());
    let error = lock_redis::RedisLock::builder(&wrong)
        .connect()
        .await
        .expect_err("wrong password accepted");
    let shown = format!("{error} {error:?}");
    assert!(
        !shown.contains("wrong-pw"),
        "the error shows the password: {shown}"
    );
    assert_eq!(error.kind(), ErrorKind::Backend, "{error}");
    assert!(
        error.to_string().contains("refused the credentials"),
        "{error}"
    );
}
