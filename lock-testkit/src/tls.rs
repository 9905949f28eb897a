//! A private certificate authority made at test time, with the certificates TLS tests need:
//! a server certificate for the loopback address, one for another host, an expired one, one
//! from a second authority nobody trusts, and a client certificate for mutual TLS.
//!
//! Keys are ECDSA P-256, files are PEM; everything lives in a temp dir removed on drop.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

use crate::ServerError;

/// A certificate and its private key, as PEM files.
#[derive(Clone, Debug)]
pub struct CertFiles {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PKCS#8 PEM).
    pub key: PathBuf,
}

/// The certificate a TLS server presents, the CA it trusts for client certificates, and
/// whether it demands one.
#[derive(Clone, Debug)]
pub struct ServerTls {
    /// The server's certificate and key.
    pub identity: CertFiles,
    /// The CA file the server checks client certificates against.
    pub ca: PathBuf,
    /// Whether a client without a certificate from `ca` is refused (mutual TLS).
    pub require_client_cert: bool,
}

/// The test authority and every certificate it issued, in a temp dir.
#[derive(Debug)]
pub struct TestPki {
    dir: tempfile::TempDir,
}

/// The names a good server certificate carries.
const LOOPBACK: [&str; 2] = ["127.0.0.1", "localhost"];

impl TestPki {
    /// Generates the authority and its certificates.
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when a key or certificate cannot be made or written.
    pub fn generate() -> Result<Self, ServerError> {
        let failed = |reason: String| ServerError::Failed {
            server: "tls",
            reason,
        };
        // Owned like a server's directory: a PKI kept in a static is removed by a later run.
        let dir = crate::servers::server_dir("tls")?;
        let pki = Self { dir };
        pki.issue_all().map_err(failed)?;
        Ok(pki)
    }

    fn issue_all(&self) -> Result<(), String> {
        let ca = authority("distlock test CA", &self.path("ca.pem"))?;
        authority("distlock untrusted CA", &self.path("other-ca.pem"))?;
        Leaf::server(&LOOPBACK)?.issue(&ca, &self.files("server"))?;
        Leaf::server(&["db.invalid"])?.issue(&ca, &self.files("wrong-host"))?;
        let mut expired = Leaf::server(&LOOPBACK)?;
        expired.params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        expired.params.not_after = rcgen::date_time_ymd(2020, 1, 2);
        expired.issue(&ca, &self.files("expired"))?;
        Leaf::client("distlock-client").issue(&ca, &self.files("client"))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn files(&self, name: &str) -> CertFiles {
        CertFiles {
            cert: self.path(&format!("{name}.pem")),
            key: self.path(&format!("{name}.key")),
        }
    }

    /// The authority's certificate: what a client trusts.
    pub fn ca(&self) -> PathBuf {
        self.path("ca.pem")
    }

    /// Another authority's certificate: trusting it alone, a client must refuse our servers.
    pub fn other_ca(&self) -> PathBuf {
        self.path("other-ca.pem")
    }

    /// A server certificate for `127.0.0.1` and `localhost`.
    pub fn server(&self) -> CertFiles {
        self.files("server")
    }

    /// A server certificate for `db.invalid` only: a client that checks the host refuses it.
    pub fn wrong_host(&self) -> CertFiles {
        self.files("wrong-host")
    }

    /// A server certificate for the loopback names that expired in 2020.
    pub fn expired(&self) -> CertFiles {
        self.files("expired")
    }

    /// A client certificate (`CN=distlock-client`) for mutual TLS.
    pub fn client(&self) -> CertFiles {
        self.files("client")
    }

    /// What a server needs to present `identity` and check client certificates against our CA.
    pub fn server_tls(&self, identity: CertFiles, require_client_cert: bool) -> ServerTls {
        ServerTls {
            identity,
            ca: self.ca(),
            require_client_cert,
        }
    }
}

/// A CA: a self-signed certificate written to `cert`, and the issuer that signs with its key.
fn authority(name: &str, cert: &Path) -> Result<Issuer<'static, KeyPair>, String> {
    let mut params = CertificateParams::default();
    params.distinguished_name = named(name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key = KeyPair::generate().map_err(|e| format!("CA key: {e}"))?;
    let certificate = params
        .self_signed(&key)
        .map_err(|e| format!("CA certificate: {e}"))?;
    write(cert, &certificate.pem())?;
    Ok(Issuer::new(params, key))
}

/// A certificate to be issued by the test CA.
struct Leaf {
    params: CertificateParams,
}

impl Leaf {
    /// A server certificate for `names`, the first also its common name.
    fn server(names: &[&str]) -> Result<Self, String> {
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let mut params =
            CertificateParams::new(names.clone()).map_err(|e| format!("names {names:?}: {e}"))?;
        params.distinguished_name = named(names.first().map_or("server", String::as_str));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        Ok(Self { params })
    }

    fn client(name: &str) -> Self {
        let mut params = CertificateParams::default();
        params.distinguished_name = named(name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        Self { params }
    }

    fn issue(&self, ca: &Issuer<'static, KeyPair>, files: &CertFiles) -> Result<(), String> {
        let key = KeyPair::generate().map_err(|e| format!("key: {e}"))?;
        let certificate = self
            .params
            .signed_by(&key, ca)
            .map_err(|e| format!("certificate: {e}"))?;
        write(&files.cert, &certificate.pem())?;
        write(&files.key, &key.serialize_pem())
    }
}

fn named(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

fn write(path: &Path, pem: &str) -> Result<(), String> {
    std::fs::write(path, pem).map_err(|e| format!("write {}: {e}", path.display()))
}

/// Copies `files` into `dir` as `<stem>.pem` and `<stem>.key`, owned by `owner` (a server that
/// drops privileges must read them) with the key readable by its owner alone, as PostgreSQL
/// demands.
///
/// # Errors
///
/// A message naming the file that could not be copied, chowned or chmodded.
pub(crate) fn install(
    files: &CertFiles,
    dir: &Path,
    stem: &str,
    owner: Option<(u32, u32)>,
) -> Result<CertFiles, String> {
    use std::os::unix::fs::PermissionsExt;
    let installed = CertFiles {
        cert: dir.join(format!("{stem}.pem")),
        key: dir.join(format!("{stem}.key")),
    };
    for (from, to, mode) in [
        (&files.cert, &installed.cert, 0o644),
        (&files.key, &installed.key, 0o600),
    ] {
        std::fs::copy(from, to).map_err(|e| format!("copy {}: {e}", from.display()))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(to, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", to.display()))?;
        }
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("chmod {}: {e}", to.display()))?;
    }
    Ok(installed)
}
