//! What a ZooKeeper server needs to serve TLS: the Netty connection factory (the NIO one has
//! no TLS), a secure client port, and PEM key and trust stores made from the test PKI's files.

use std::path::Path;

use crate::tls::ServerTls;

/// The `zoo.cfg` lines and JVM arguments that make a server serve TLS.
pub(super) struct SecureConfig {
    pub(super) cfg: String,
    pub(super) jvm_args: Vec<String>,
}

/// Writes the key store (the server's key followed by its certificate, both PEM) into `dir`
/// and returns the configuration serving TLS on `port`.
pub(super) fn configure(dir: &Path, tls: &ServerTls, port: u16) -> Result<SecureConfig, String> {
    let read =
        |path: &Path| std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()));
    let key_store = dir.join("keystore.pem");
    let pem = format!("{}{}", read(&tls.identity.key)?, read(&tls.identity.cert)?);
    std::fs::write(&key_store, pem).map_err(|e| format!("keystore.pem: {e}"))?;
    let client_auth = if tls.require_client_cert {
        "need"
    } else {
        "none"
    };
    let cfg = format!(
        "secureClientPort={port}\nsecureClientPortAddress=127.0.0.1\n\
         ssl.keyStore.location={}\nssl.keyStore.type=PEM\n\
         ssl.trustStore.location={}\nssl.trustStore.type=PEM\n\
         ssl.clientAuth={client_auth}\n",
        key_store.display(),
        tls.ca.display(),
    );
    let factory = "org.apache.zookeeper.server.NettyServerCnxnFactory";
    Ok(SecureConfig {
        cfg,
        jvm_args: vec![format!("-Dzookeeper.serverCnxnFactory={factory}")],
    })
}
