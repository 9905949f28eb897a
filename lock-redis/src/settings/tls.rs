//! The certificate files a `rediss` URL names (or the builder gives): the roots to trust
//! instead of the platform's, and a client certificate with its key.

use lock_core::Result;
use lock_core::url::LockUrl;
use redis::{ClientTlsConfig, TlsCertificates};

/// PEM contents, read while parsing so a missing file fails before any I/O to Redis.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlsFiles {
    pub(crate) root: Option<Vec<u8>>,
    pub(crate) client: Option<(Vec<u8>, Vec<u8>)>,
}

impl TlsFiles {
    /// Whether any certificate is given.
    pub(crate) fn any(&self) -> bool {
        self.root.is_some() || self.client.is_some()
    }

    /// The certificates in the form the `redis` crate takes them; `None` when none is given
    /// (the platform's roots, no client certificate).
    pub(crate) fn certificates(&self) -> Option<TlsCertificates> {
        self.any().then(|| TlsCertificates {
            client_tls: self
                .client
                .clone()
                .map(|(client_cert, client_key)| ClientTlsConfig {
                    client_cert,
                    client_key,
                }),
            root_cert: self.root.clone(),
        })
    }
}

/// The contents of the file parameter `key` names.
pub(crate) fn read_pem(url: &mut LockUrl, key: &str) -> Result<Option<Vec<u8>>> {
    let Some(path) = url.take(key) else {
        return Ok(None);
    };
    std::fs::read(&path)
        .map(Some)
        .map_err(|error| url.invalid(format!("{key} {path:?} cannot be read: {error}")))
}

/// The client certificate and key of `tls_cert` and `tls_key`, which go together.
pub(crate) fn read_client_certificate(url: &mut LockUrl) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    match (read_pem(url, "tls_cert")?, read_pem(url, "tls_key")?) {
        (Some(cert), Some(key)) => Ok(Some((cert, key))),
        (None, None) => Ok(None),
        _ => Err(url.invalid(
            "a client certificate and its key go together: give both tls_cert and tls_key",
        )),
    }
}
