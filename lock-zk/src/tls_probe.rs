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

/// How long to wait before trying again to reach a host that refused the TCP connection (a
/// server still starting, or restarting): the session keeps trying too.
const RECONNECT_DELAY: Duration = Duration::from_millis(50);

/// Why a handshake with the first of `hosts` (`HOST:PORT,...`) fails, or `None` when it
/// succeeds or the address cannot be used (then the session's own error stands).
///
/// While the host does not accept a TCP connection this keeps trying, so a server that opens
/// its port after the session began still gets its certificate checked: the caller bounds the
/// probe by racing it against the session's own connect timeout.
pub(crate) async fn handshake_fault(config: Arc<ClientConfig>, hosts: &str) -> Option<String> {
    let first = hosts.split(',').next()?;
    let (host, _) = first.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(host.to_owned()).ok()?;
    let stream = loop {
        match TcpStream::connect(first).await {
            Ok(stream) => break stream,
            Err(_) => tokio::time::sleep(RECONNECT_DELAY).await,
        }
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use lock_testkit::servers::PortReservation;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    /// A server that opens its port only after the probe began still has its handshake
    /// checked: here it speaks no TLS at all, which the probe must report.
    #[tokio::test]
    async fn a_port_that_opens_late_is_still_probed() {
        crate::tls::choose_provider();
        let reservation = PortReservation::new().expect("a port");
        let address = format!("127.0.0.1:{}", reservation.port());
        let config = ClientConfig::builder()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let target = address.clone();
        let probe = tokio::spawn(async move { handshake_fault(Arc::new(config), &target).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let listener = TcpListener::bind(&address).await.expect("bind");
        tokio::spawn(async move {
            while let Ok((mut plain, _)) = listener.accept().await {
                let _ = plain.write_all(b"not a TLS server\r\n\r\n").await;
            }
        });
        let fault = tokio::time::timeout(Duration::from_secs(5), probe)
            .await
            .expect("probe ends")
            .expect("probe task");
        assert!(
            fault.is_some(),
            "no fault reported for a port that opened late"
        );
    }
}
