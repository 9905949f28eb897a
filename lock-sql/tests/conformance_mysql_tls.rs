//! The conformance suite on MariaDB over TLS: `ssl-mode=verify_identity` against a server
//! that takes TLS connections only (`require_secure_transport`).

mod support;

use std::sync::{Arc, OnceLock};

use lock_core::ErrorKind;
use lock_sql::SqlLock;
use lock_testkit::servers::MariaDbServer;
use lock_testkit::tls::TestPki;
use lock_testkit::{ConformanceTarget, require};
use support::SqlTarget;

/// The server, its URL without TLS parameters, and the URL every client of the suite uses.
struct Tls {
    _pki: TestPki,
    _server: MariaDbServer,
    base: String,
    url: String,
}

fn tls() -> Option<&'static Tls> {
    static SERVER: OnceLock<Option<Tls>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let pki = require(TestPki::generate())?;
            let server = require(MariaDbServer::start_tls(
                &pki.server_tls(pki.server(), false),
            ))?;
            let base = server.url();
            let url = format!(
                "{base}?ssl-mode=verify_identity&ssl-ca={}",
                pki.ca().display()
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

async fn mysql() -> Option<Arc<dyn ConformanceTarget>> {
    tls().map(|tls| SqlTarget::shared(tls.url.clone()))
}

lock_testkit::conformance_tests!(mysql());

/// A plaintext client is refused. MariaDB answers it with the "Access denied" of a wrong
/// password, so the error names both causes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_refuses_a_plaintext_client() {
    let Some(tls) = tls() else { return };
    let plaintext = format!("{}?ssl-mode=disabled", tls.base);
    let error = SqlLock::builder(&plaintext)
        .connect()
        .await
        .expect_err("a plaintext client got in");
    assert_eq!(error.kind(), ErrorKind::Backend, "{error}");
    assert!(
        error.to_string().contains("takes TLS connections only"),
        "{error}"
    );
}
