//! The conformance suite over `rediss://`: a private CA (`tls_ca`) and a client certificate
//! (`tls_cert`, `tls_key`) against a server that demands one (`tls-auth-clients yes`).

mod support;

use std::sync::{Arc, OnceLock};

use lock_core::{ErrorKind, ServiceBuilder};
use lock_redis::RedisLock;
use lock_testkit::servers::RedisServer;
use lock_testkit::tls::TestPki;
use lock_testkit::{ConformanceTarget, require};
use support::target::RedisTarget;

/// The server, its plaintext URL (for commands behind the lock's back) and its TLS URL.
struct Tls {
    pki: TestPki,
    server: RedisServer,
    url: String,
}

fn tls() -> Option<&'static Tls> {
    static SERVER: OnceLock<Option<Tls>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let pki = require(TestPki::generate())?;
            let server = require(RedisServer::start_tls(&pki.server_tls(pki.server(), true)))?;
            let url = server.tls_url()?;
            Some(Tls { pki, server, url })
        })
        .as_ref()
}

/// The parameters that make a client trust the test CA and present its client certificate.
fn params(pki: &TestPki) -> String {
    let client = pki.client();
    format!(
        "tls_ca={}&tls_cert={}&tls_key={}",
        pki.ca().display(),
        client.cert.display(),
        client.key.display()
    )
}

async fn rediss() -> Option<Arc<dyn ConformanceTarget>> {
    let tls = tls()?;
    let (url, admin) = (tls.url.clone(), Some(tls.server.url()));
    Some(Arc::new(RedisTarget::new(url, params(&tls.pki), admin)))
}

lock_testkit::conformance_tests!(rediss());

/// Without the client certificate the server ends the handshake; without the CA the client
/// does not trust the server. Both are `Unavailable`, within the connect timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_client_certificate_or_ca_is_refused() {
    let Some(tls) = tls() else { return };
    let no_client = format!("{}?tls_ca={}", tls.url, tls.pki.ca().display());
    let no_ca = format!("{}?{}", tls.url, params(&tls.pki)).replace(
        &tls.pki.ca().display().to_string(),
        &tls.pki.other_ca().display().to_string(),
    );
    for url in [no_client, no_ca] {
        let started = std::time::Instant::now();
        let error = RedisLock::builder(&url)
            .connect_timeout(std::time::Duration::from_secs(2))
            .connect()
            .await
            .expect_err("connected without the client certificate or the CA");
        assert_eq!(error.kind(), ErrorKind::Unavailable, "{url}: {error}");
        assert!(
            started.elapsed() < lock_testkit::scaled_ms(3000),
            "{url}: took {:?}",
            started.elapsed()
        );
    }
}
