//! TLS going wrong, on PostgreSQL and MariaDB: a certificate for another host, an expired one,
//! one from an authority the client does not trust, and TLS demanded of a server without it.
//! Each fails with `Unavailable` naming the cause, within the connect timeout.

use std::time::{Duration, Instant};

use lock_core::{DistributedLockExt, ErrorKind};
use lock_sql::SqlLock;
use lock_testkit::servers::{MariaDbServer, PostgresServer};
use lock_testkit::tls::{CertFiles, TestPki};
use lock_testkit::{require, scaled};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug)]
enum Db {
    Postgres,
    MariaDb,
}

/// A running server of either kind; dropped with the test.
#[allow(dead_code)] // held for their drop
enum Server {
    Postgres(PostgresServer),
    MariaDb(MariaDbServer),
}

impl Db {
    /// A server presenting `identity` (TLS only), or a plaintext one for `None`.
    fn start(self, pki: &TestPki, identity: Option<CertFiles>) -> Option<(Server, String)> {
        let tls = identity.map(|identity| pki.server_tls(identity, false));
        match (self, tls) {
            (Db::Postgres, None) => require(PostgresServer::start()).map(Server::Postgres),
            (Db::Postgres, Some(tls)) => {
                require(PostgresServer::start_tls(&tls)).map(Server::Postgres)
            }
            (Db::MariaDb, None) => require(MariaDbServer::start()).map(Server::MariaDb),
            (Db::MariaDb, Some(tls)) => {
                require(MariaDbServer::start_tls(&tls)).map(Server::MariaDb)
            }
        }
        .map(|server| {
            let url = match &server {
                Server::Postgres(server) => server.url(),
                Server::MariaDb(server) => server.url(),
            };
            (server, url)
        })
    }

    /// The mode parameter that checks the chain and the host, the chain only, or nothing.
    fn mode(self, check: Check) -> &'static str {
        match (self, check) {
            (Db::Postgres, Check::Host) => "sslmode=verify-full",
            (Db::Postgres, Check::Chain) => "sslmode=verify-ca",
            (Db::Postgres, Check::Nothing) => "sslmode=require",
            (Db::MariaDb, Check::Host) => "ssl-mode=verify_identity",
            (Db::MariaDb, Check::Chain) => "ssl-mode=verify_ca",
            (Db::MariaDb, Check::Nothing) => "ssl-mode=required",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Check {
    Host,
    Chain,
    Nothing,
}

/// `base` with the TLS mode and a CA, and a short connect timeout.
fn url(db: Db, base: &str, check: Check, ca: &std::path::Path) -> String {
    format!(
        "{base}?{}&tls_ca={}&connect_timeout={}ms",
        db.mode(check),
        ca.display(),
        CONNECT_TIMEOUT.as_millis()
    )
}

/// Connecting to `url` fails with `Unavailable`, within the connect timeout, and the error
/// (with its cause) contains `cause`.
async fn refused(url: &str, cause: &str) {
    let started = Instant::now();
    let error = SqlLock::builder(url)
        .connect()
        .await
        .expect_err("connected despite the TLS fault");
    let took = started.elapsed();
    eprintln!("{url}: {error} (after {took:?})");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    let shown = error.to_string().to_lowercase();
    assert!(
        shown.contains("tls") && shown.contains(cause),
        "{url}: no {cause:?} in {error}"
    );
    assert!(
        took < scaled(CONNECT_TIMEOUT) + Duration::from_secs(1),
        "failed after {took:?}"
    );
}

async fn locks(url: &str) {
    let lock = SqlLock::builder(url).connect().await.expect("connect");
    let guard = lock
        .try_acquire("tls-fault")
        .await
        .expect("try")
        .expect("free");
    guard.release().await.expect("release");
}

async fn another_host(db: Db) {
    let Some(pki) = require(TestPki::generate()) else {
        return;
    };
    let Some((_server, base)) = db.start(&pki, Some(pki.wrong_host())) else {
        return;
    };
    refused(
        &url(db, &base, Check::Host, &pki.ca()),
        "not valid for name",
    )
    .await;
    locks(&url(db, &base, Check::Chain, &pki.ca())).await;
    refused(
        &url(db, &base, Check::Chain, &pki.other_ca()),
        "unknownissuer",
    )
    .await;
}

async fn expired(db: Db) {
    let Some(pki) = require(TestPki::generate()) else {
        return;
    };
    let Some((_server, base)) = db.start(&pki, Some(pki.expired())) else {
        return;
    };
    refused(&url(db, &base, Check::Chain, &pki.ca()), "expired").await;
}

async fn no_tls_on_the_server(db: Db) {
    let Some(pki) = require(TestPki::generate()) else {
        return;
    };
    let Some((_server, base)) = db.start(&pki, None) else {
        return;
    };
    refused(
        &url(db, &base, Check::Nothing, &pki.ca()),
        "does not support tls",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_checks_the_host_name_and_the_authority() {
    another_host(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_checks_the_host_name_and_the_authority() {
    another_host(Db::MariaDb).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_refuses_an_expired_certificate() {
    expired(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_refuses_an_expired_certificate() {
    expired(Db::MariaDb).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_demanding_tls_of_a_plaintext_server_fails() {
    no_tls_on_the_server(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_demanding_tls_of_a_plaintext_server_fails() {
    no_tls_on_the_server(Db::MariaDb).await;
}
