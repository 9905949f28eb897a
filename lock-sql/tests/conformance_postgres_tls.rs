//! The conformance suite on PostgreSQL over TLS: `sslmode=verify-full` with a client
//! certificate, against a server that takes TLS connections only and asks every client for a
//! certificate from the test CA (`hostssl ... clientcert=verify-ca`).

mod support;

use std::sync::{Arc, OnceLock};

use lock_core::ErrorKind;
use lock_testkit::ConformanceTarget;
use lock_testkit::servers::PostgresServer;
use support::SqlTarget;
use support::tls::{TlsServer, refused_in_time};

const VERIFY: &str = "sslmode=verify-full";

fn tls() -> Option<&'static TlsServer<PostgresServer>> {
    static SERVER: OnceLock<Option<TlsServer<PostgresServer>>> = OnceLock::new();
    SERVER
        .get_or_init(|| TlsServer::start(PostgresServer::start_tls, PostgresServer::url, true))
        .as_ref()
}

async fn postgres() -> Option<Arc<dyn ConformanceTarget>> {
    tls().map(|tls| SqlTarget::shared(tls.client_url(&tls.base, VERIFY, true)))
}

lock_testkit::conformance_tests!(postgres());

/// The server of this binary refuses, within the connect timeout, what the suite's clients
/// would be without their TLS settings: a plaintext client, and a TLS client without a
/// certificate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_refuses_clients_without_tls_or_a_certificate() {
    let Some(tls) = tls() else { return };
    let error = refused_in_time(&format!("{}?sslmode=disable", tls.base)).await;
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(
        error.to_string().contains("TLS connections only"),
        "{error}"
    );

    let error = refused_in_time(&tls.client_url(&tls.base, VERIFY, false)).await;
    assert!(error.to_string().contains("certificate"), "{error}");
}
