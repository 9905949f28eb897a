//! A TLS handshake of our own beside the ZooKeeper client's: the client retries a failed
//! handshake until the connect timeout and keeps the cause to itself, so a certificate the
//! server refuses, or a server certificate we do not trust, would read as a bare timeout.

use std::sync::Arc;
use std::time::Duration;

use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// How long to listen after the handshake for the alert a TLS 1.3 server sends when it refuses
/// the client's certificate (it speaks no further before the client's first request).
const REFUSAL_WINDOW: Duration = Duration::from_millis(200);

/// Why a handshake with the first of `hosts` (`HOST:PORT,...`) fails, or `None` when it
/// succeeds or the host cannot be reached (then the session's own error stands).
pub(crate) async fn handshake_fault(config: Arc<ClientConfig>, hosts: &str) -> Option<String> {
    let first = hosts.split(',').next()?;
    let (host, _) = first.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(host.to_owned()).ok()?;
    let stream = TcpStream::connect(first).await.ok()?;
    let mut tls = match TlsConnector::from(config).connect(name, stream).await {
        Ok(tls) => tls,
        Err(error) => return Some(error.to_string()),
    };
    let mut byte = [0_u8; 1];
    match tokio::time::timeout(REFUSAL_WINDOW, tls.read(&mut byte)).await {
        Ok(Err(error)) => Some(error.to_string()),
        _ => None,
    }
}
