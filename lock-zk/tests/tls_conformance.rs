//! The conformance suite over `zk+tls://`: a private CA (`tls_ca`) and a client certificate
//! (`tls_cert`, `tls_key`) against a server that demands one (`ssl.clientAuth=need`), and the
//! certificates and ports a client must refuse, each within the connect timeout.

mod support;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use lock_core::{DistributedLockExt, ErrorKind, ServiceBuilder};
use lock_testkit::servers::ZkServer;
use lock_testkit::tls::TestPki;
use lock_testkit::{ConformanceTarget, require, scaled_ms};
use lock_zk::ZkLock;

/// The test CA and a server that serves TLS with mutual authentication.
struct Tls {
    pki: TestPki,
    server: ZkServer,
}

fn tls() -> Option<&'static Tls> {
    static SERVER: OnceLock<Option<Tls>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let pki = require(TestPki::generate())?;
            let server = require(ZkServer::start_tls(&pki.server_tls(pki.server(), true)))?;
            Some(Tls { pki, server })
        })
        .as_ref()
}

/// `zk+tls://` to `port` trusting `ca`, presenting the client certificate when `client`.
fn url(pki: &TestPki, port: u16, ca: &std::path::Path, client: bool) -> String {
    let mut url = format!("zk+tls://127.0.0.1:{port}?tls_ca={}", ca.display());
    if client {
        let identity = pki.client();
        url.push_str(&format!(
            "&tls_cert={}&tls_key={}",
            identity.cert.display(),
            identity.key.display()
        ));
    }
    url
}

async fn zk_tls() -> Option<Arc<dyn ConformanceTarget>> {
    let tls = tls()?;
    let port = tls.server.tls_port()?;
    let url = url(&tls.pki, port, &tls.pki.ca(), true);
    Some(Arc::new(support::ZkTarget { url }))
}

lock_testkit::conformance_tests!(zk_tls());

/// Connecting to `url` fails with `Unavailable` within the 2 s connect timeout (plus slack),
/// and the message says `cause`.
async fn refused(url: &str, cause: &str) {
    let started = Instant::now();
    let error = ZkLock::builder(url)
        .connect_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect_err("connected despite the TLS fault");
    let took = started.elapsed();
    eprintln!("{url}: {took:?}: {error}");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{url}: {error}");
    assert!(took < scaled_ms(3000), "{url}: took {took:?}");
    assert!(
        error.to_string().contains(cause),
        "{url}: no {cause:?} in {error}"
    );
}

/// Without the client certificate, or trusting another CA, no session is made; TLS spoken to
/// the plaintext port and plaintext spoken to the TLS port fail the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_client_certificate_wrong_ca_and_wrong_ports_are_refused_in_time() {
    let Some(tls) = tls() else { return };
    let (pki, server) = (&tls.pki, &tls.server);
    let tls_port = server.tls_port().expect("TLS port");
    refused(&url(pki, tls_port, &pki.ca(), false), "TLS with").await;
    refused(&url(pki, tls_port, &pki.other_ca(), true), "UnknownIssuer").await;
    refused(&url(pki, server.port(), &pki.ca(), true), "TLS with").await;
    refused(
        &format!("zk://127.0.0.1:{tls_port}"),
        "no ZooKeeper session",
    )
    .await;
}

/// A server certificate for another host, or an expired one, is refused although our CA
/// signed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_host_and_expired_server_certificates_are_refused_in_time() {
    let Some(pki) = require(TestPki::generate()) else {
        return;
    };
    for (identity, cause) in [
        (pki.wrong_host(), "not valid for name"),
        (pki.expired(), "expired"),
    ] {
        let Some(server) = require(ZkServer::start_tls(&pki.server_tls(identity, false))) else {
            return;
        };
        let port = server.tls_port().expect("TLS port");
        refused(&url(&pki, port, &pki.ca(), false), cause).await;
    }
}

/// A good certificate without mutual TLS: a session, a hold, a release.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_client_authentication_takes_the_ca_alone() {
    let Some(pki) = require(TestPki::generate()) else {
        return;
    };
    let Some(server) = require(ZkServer::start_tls(&pki.server_tls(pki.server(), false))) else {
        return;
    };
    let port = server.tls_port().expect("TLS port");
    let lock = ZkLock::builder(&url(&pki, port, &pki.ca(), false))
        .connect()
        .await
        .expect("TLS session with the CA alone");
    let held = lock.try_acquire("tls").await.expect("try").expect("free");
    held.release().await.expect("release");
}
