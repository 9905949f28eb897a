//! The conformance suite on PostgreSQL over TLS: `sslmode=verify-full` with a client
//! certificate, against a server that takes TLS connections only and asks every client for a
//! certificate from the test CA (`hostssl ... clientcert=verify-ca`).

mod support;

use std::sync::{Arc, OnceLock};

use lock_core::ErrorKind;
use lock_sql::SqlLock;
use lock_testkit::servers::PostgresServer;
use lock_testkit::tls::TestPki;
use lock_testkit::{ConformanceTarget, require};
use support::SqlTarget;

/// The server, its URL without TLS parameters, and the URL every client of the suite uses.
struct Tls {
    _pki: TestPki,
    _server: PostgresServer,
    base: String,
    url: String,
}

fn tls() -> Option<&'static Tls> {
    static SERVER: OnceLock<Option<Tls>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let pki = require(TestPki::generate())?;
            let server = require(PostgresServer::start_tls(
                &pki.server_tls(pki.server(), true),
            ))?;
            let client = pki.client();
            let base = server.url();
            let url = format!(
                "{base}?sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
                pki.ca().display(),
                client.cert.display(),
                client.key.display()
            );
            Some(Tls {
                _pki: pki,
                _server: server,
                base,
                url,
            })
        })
        .as_ref()
}

async fn postgres() -> Option<Arc<dyn ConformanceTarget>> {
    tls().map(|tls| SqlTarget::shared(tls.url.clone()))
}

lock_testkit::conformance_tests!(postgres());

/// The server of this binary refuses what the suite's clients would be without their TLS
/// settings: a plaintext client, and a TLS client without a certificate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_refuses_clients_without_tls_or_a_certificate() {
    let Some(tls) = tls() else { return };
    let plaintext = format!("{}?sslmode=disable", tls.base);
    let error = SqlLock::builder(&plaintext)
        .connect()
        .await
        .expect_err("a plaintext client got in");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(
        error.to_string().contains("TLS connections only"),
        "{error}"
    );

    let ca = tls.url.split("&sslcert=").next().expect("URL");
    let error = SqlLock::builder(ca)
        .connect()
        .await
        .expect_err("a client without a certificate got in");
    assert!(error.to_string().contains("certificate"), "{error}");
}
