//! Parameters that name a file the client reads (certificates, keys): read while parsing, so
//! a missing or unreadable file fails with `InvalidInput` before any I/O to a server.

use super::LockUrl;
use crate::Result;

impl LockUrl {
    /// Takes parameter `key` as a path and returns the file's contents.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) naming the parameter, the
    /// path and the cause when the file cannot be read.
    pub fn take_file(&mut self, key: &str) -> Result<Option<Vec<u8>>> {
        let Some(path) = self.take(key) else {
            return Ok(None);
        };
        std::fs::read(&path)
            .map(Some)
            .map_err(|error| self.invalid(format!("{key} {path:?} cannot be read: {error}")))
    }

    /// Takes the client certificate and key of mutual TLS, `tls_cert` and `tls_key`, which go
    /// together: the contents of both files, or `None` when neither is given.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) when only one is given or a
    /// file cannot be read.
    pub fn take_client_identity(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match (self.take_file("tls_cert")?, self.take_file("tls_key")?) {
            (Some(cert), Some(key)) => Ok(Some((cert, key))),
            (None, None) => Ok(None),
            _ => Err(self.invalid(
                "a client certificate and its key go together: give both tls_cert and tls_key",
            )),
        }
    }
}
