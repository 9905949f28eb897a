//! `rediss://` with a private CA, and ACL users with passwords from the URL.

use lock_core::ServiceBuilder;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind};
use lock_testkit::servers::PortReservation;
use lock_testkit::servers::RedisServer;
use lock_testkit::{require, scaled_ms};

/// Runs openssl in `dir`, panicking with its output on failure.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A CA and a server certificate for 127.0.0.1 signed by it.
fn certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "1",
            "-subj",
            "/CN=distlock test CA",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").expect("write san.ext");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "1",
            "-extfile",
            "san.ext",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rediss_with_a_private_ca_locks_and_wakes_waiters() {
    if Command::new("openssl").arg("version").output().is_err() {
        eprintln!("SKIPPED: openssl is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    certificates(dir.path());
    let file = |name: &str| dir.path().join(name).display().to_string();
    let reservation = PortReservation::new().expect("a port for TLS");
    let tls_port = reservation.port();
    let args: Vec<String> = [
        "--tls-port",
        &tls_port.to_string(),
        "--tls-cert-file",
        &file("server.pem"),
        "--tls-key-file",
        &file("server.key"),
        "--tls-ca-cert-file",
        &file("ca.pem"),
        "--tls-auth-clients",
        "no",
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .collect();
    let Some(_server) = require(RedisServer::start_with(&args)) else {
        return;
    };
    let url = format!("rediss://127.0.0.1:{tls_port}");
    let ca = std::fs::read(dir.path().join("ca.pem")).expect("read ca.pem");
    let connect = || {
        lock_redis::RedisLock::builder(&url)
            .tls_root_certificate(ca.clone())
            .connect()
    };
    let (a, b) = (
        connect().await.expect("TLS connect"),
        connect().await.expect("TLS connect"),
    );
    let held = a.try_acquire("tls").await.expect("try").expect("free");
    let waiter = tokio::spawn(async move { b.acquire_timeout("tls", scaled_ms(5000)).await });
    tokio::time::sleep(scaled_ms(200)).await;
    held.release().await.expect("release");
    waiter
        .await
        .expect("waiter")
        .expect("waiter acquire over TLS")
        .release()
        .await
        .expect("release");

    // Without the private CA the server's certificate is not trusted.
    let untrusted = lock_redis::RedisLock::builder(&url)
        .connect_timeout(Duration::from_secs(2))
        .connect()
        .await;
    let error = untrusted.expect_err("connected to an untrusted server");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
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
