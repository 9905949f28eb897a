//! The set-up the TLS binaries share: the test authority, a server of theirs that takes TLS
//! connections only, client URLs that check the server (and present the client certificate),
//! and the check that a refused client is told so within the connect timeout.

use std::time::{Duration, Instant};

use lock_core::Error;
use lock_sql::SqlLock;
use lock_testkit::tls::{ServerTls, TestPki};
use lock_testkit::{ServerError, require, scaled};

/// The connect timeout of the URLs that expect a refusal.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A server presenting the test authority's loopback certificate, with that authority.
pub(crate) struct TlsServer<S> {
    pub(crate) pki: TestPki,
    _server: S,
    /// The administrator's URL, without TLS parameters.
    pub(crate) base: String,
}

impl<S> TlsServer<S> {
    /// Generates the authority and starts a server with `start`, asking every client for a
    /// certificate from the authority if `require_client_cert` (where the server does so per
    /// server, not per account); `None` skips.
    pub(crate) fn start(
        start: impl FnOnce(&ServerTls) -> Result<S, ServerError>,
        url: fn(&S) -> String,
        require_client_cert: bool,
    ) -> Option<Self> {
        let pki = require(TestPki::generate())?;
        let server = require(start(&pki.server_tls(pki.server(), require_client_cert)))?;
        let base = url(&server);
        Some(Self {
            pki,
            _server: server,
            base,
        })
    }

    /// `base` (any user's URL on this server) with `mode` (the parameter that checks the
    /// server), the authority, and the client certificate and key if `client_cert`, under the
    /// driver's parameter names, which the suite's own sqlx pools read too.
    pub(crate) fn client_url(&self, base: &str, mode: &str, client_cert: bool) -> String {
        let [ca, cert, key] = if base.starts_with("postgres") {
            ["sslrootcert", "sslcert", "sslkey"]
        } else {
            ["ssl-ca", "ssl-cert", "ssl-key"]
        };
        let mut url = format!("{base}?{mode}&{ca}={}", self.pki.ca().display());
        if client_cert {
            let client = self.pki.client();
            let (cert_file, key_file) = (client.cert.display(), client.key.display());
            url.push_str(&format!("&{cert}={cert_file}&{key}={key_file}"));
        }
        url
    }
}

/// Connecting to `url` with a connect timeout of [`CONNECT_TIMEOUT`] fails within it; returns
/// the error.
pub(crate) async fn refused_in_time(url: &str) -> Error {
    let url = format!("{url}&connect_timeout={}ms", CONNECT_TIMEOUT.as_millis());
    let started = Instant::now();
    let error = SqlLock::builder(&url)
        .connect()
        .await
        .expect_err("a client the server should refuse got in");
    let took = started.elapsed();
    eprintln!("{url}: {error} (after {took:?})");
    assert!(
        took < scaled(CONNECT_TIMEOUT) + Duration::from_secs(1),
        "refused only after {took:?}: {error}"
    );
    error
}
