//! The certificate files a `rediss` URL names (or the builder gives): the roots to trust
//! instead of the platform's, and a client certificate with its key.

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
