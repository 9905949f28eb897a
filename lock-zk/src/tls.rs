//! TLS for `zk+tls://` URLs: the authority that signed the servers' certificates (`tls_ca`,
//! required: the ZooKeeper client has no platform roots) and, for servers that demand one, a
//! client certificate (`tls_cert` with `tls_key`). Files are read and checked while parsing, so
//! a missing file or a malformed PEM fails with `InvalidInput` before any I/O.

use std::sync::Arc;

use lock_core::Result;
use lock_core::url::LockUrl;
use rustls::ClientConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use zookeeper_client::TlsOptions;

/// The parameters a `zk+tls://` URL takes besides the plaintext scheme's.
pub(crate) const KEYS: [&str; 3] = ["tls_ca", "tls_cert", "tls_key"];

/// The same certificates twice: for the ZooKeeper client, and for a handshake of our own that
/// names the cause when the client's fails (the client only retries until the timeout).
#[derive(Clone)]
pub(crate) struct ZkTls {
    pub(crate) options: TlsOptions,
    pub(crate) probe: Arc<ClientConfig>,
}

/// Reads the TLS parameters of a `zk+tls://` URL; `None` when `tls_ca` is missing, which the
/// caller reports once the unknown parameters are checked.
pub(crate) fn from_url(url: &mut LockUrl) -> Result<Option<ZkTls>> {
    let Some(ca) = url.take_file("tls_ca")? else {
        return Ok(None);
    };
    let identity = url.take_client_identity()?;
    let unusable = |what: &str, error: &dyn std::fmt::Display| {
        url.invalid(format!("{what} is not usable: {error}"))
    };
    let ca_text = String::from_utf8(ca.clone()).map_err(|e| unusable("tls_ca", &e))?;
    let mut options = TlsOptions::new()
        .with_pem_ca(&ca_text)
        .map_err(|e| unusable("tls_ca", &e))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&ca) {
        let cert = cert.map_err(|e| unusable("tls_ca", &e))?;
        roots.add(cert).map_err(|e| unusable("tls_ca", &e))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| unusable("TLS", &e))?
        .with_root_certificates(roots);
    let probe = match identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let cert_text =
                String::from_utf8(cert.clone()).map_err(|e| unusable("tls_cert", &e))?;
            let key_text = String::from_utf8(key.clone()).map_err(|e| unusable("tls_key", &e))?;
            options = options
                .with_pem_identity(&cert_text, &key_text)
                .map_err(|e| unusable("tls_cert with tls_key", &e))?;
            let chain = CertificateDer::pem_slice_iter(&cert)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| unusable("tls_cert", &e))?;
            let key = PrivateKeyDer::from_pem_slice(&key).map_err(|e| unusable("tls_key", &e))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| unusable("tls_cert with tls_key", &e))?
        }
    };
    Ok(Some(ZkTls {
        options,
        probe: Arc::new(probe),
    }))
}

/// Makes ring the process's TLS provider unless one is chosen already: the ZooKeeper client
/// asks for the process default, and a build holding two providers has none by itself.
pub(crate) fn choose_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another installer leaves a provider in place: that is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
