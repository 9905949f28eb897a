//! The conformance suite on MariaDB over TLS: `ssl-mode=verify_identity` against a server
//! that takes TLS connections only (`require_secure_transport`).

mod support;

use std::sync::{Arc, OnceLock};

use lock_core::ErrorKind;
use lock_testkit::ConformanceTarget;
use lock_testkit::servers::MariaDbServer;
use support::SqlTarget;
use support::tls::{TlsServer, refused_in_time};

fn tls() -> Option<&'static TlsServer<MariaDbServer>> {
    static SERVER: OnceLock<Option<TlsServer<MariaDbServer>>> = OnceLock::new();
    SERVER
        .get_or_init(|| TlsServer::start(MariaDbServer::start_tls, MariaDbServer::url, false))
        .as_ref()
}

async fn mysql() -> Option<Arc<dyn ConformanceTarget>> {
    let url = |tls: &TlsServer<_>| tls.client_url(&tls.base, "ssl-mode=verify_identity", false);
    tls().map(|tls| SqlTarget::shared(url(tls)))
}

lock_testkit::conformance_tests!(mysql());

/// A plaintext client is refused within the connect timeout. MariaDB answers it with the
/// "Access denied" of a wrong password, so the error names both causes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_refuses_a_plaintext_client() {
    let Some(tls) = tls() else { return };
    let error = refused_in_time(&format!("{}?ssl-mode=disabled", tls.base)).await;
    assert_eq!(error.kind(), ErrorKind::Backend, "{error}");
    assert!(
        error.to_string().contains("takes TLS connections only"),
        "{error}"
    );
}
