//! What a `zk://` URL (and the builder) configures, parsed and checked without I/O.

use std::fmt;
use std::time::Duration;

use lock_core::backend::{Service, ServiceOptions};
use lock_core::url::LockUrl;
use lock_core::{AcquireOptions, Result};

use crate::ZkAcl;
use crate::tls::{self, ZkTls};

/// The parameters a `zk://` URL takes besides [`ServiceOptions::KEYS`].
pub(crate) const KEYS: [&str; 3] = ["session_timeout", "root", "acl"];

/// The default parent of every lock's node.
pub(crate) const DEFAULT_ROOT: &str = "/distlock";
/// The default session timeout asked of the server (which clamps it to 2 to 20 ticks).
pub(crate) const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings the builder may set; each overrides the URL's.
#[derive(Clone, Debug, Default)]
pub(crate) struct ZkOptions {
    pub(crate) session_timeout: Option<Duration>,
    pub(crate) root: Option<String>,
    pub(crate) acl: Option<ZkAcl>,
}

/// Everything a session needs, checked. `Debug` hides the digest password.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) hosts: String,
    pub(crate) chroot: Option<String>,
    pub(crate) root: String,
    pub(crate) session_timeout: Duration,
    pub(crate) digest: Option<(String, String)>,
    pub(crate) acl: ZkAcl,
    pub(crate) service: Service,
    /// TLS to every server (`zk+tls://`), with the authority to trust.
    pub(crate) tls: Option<ZkTls>,
    /// The URL, password hidden, for messages.
    pub(crate) server: String,
}

impl Settings {
    /// Parses `zk://[USER:PASSWORD@]HOST[:PORT][,...][/CHROOT][?...]` (or `zk+tls://`, which
    /// also takes `tls_ca`, `tls_cert` and `tls_key`) with the builder's overrides.
    pub(crate) fn resolve(
        url: &str,
        service: &ServiceOptions,
        options: &ZkOptions,
    ) -> Result<Self> {
        let mut parsed = LockUrl::parse(url)?;
        let secure = match parsed.scheme() {
            "zk" => false,
            "zk+tls" => true,
            _ => {
                return Err(parsed.invalid(
                    "not a zk:// URL: write zk://HOST:2181[,HOST:2181][/CHROOT], or zk+tls:// \
                     with tls_ca=FILE",
                ));
            }
        };
        let tls = if secure {
            tls::from_url(&mut parsed)?
        } else {
            None
        };
        let resolved = service.resolve(&mut parsed)?;
        let session_timeout = match options.session_timeout {
            Some(timeout) => timeout,
            None => parsed
                .take_duration("session_timeout")?
                .unwrap_or(DEFAULT_SESSION_TIMEOUT),
        };
        if session_timeout.is_zero() || session_timeout > AcquireOptions::MAX_LEASE {
            return Err(parsed.invalid(format!(
                "session_timeout {session_timeout:?} is out of range: it is every hold's lease, \
                 from 1ms to {:?}",
                AcquireOptions::MAX_LEASE
            )));
        }
        let root = match options.root.clone() {
            Some(root) => root,
            None => parsed
                .take("root")
                .unwrap_or_else(|| DEFAULT_ROOT.to_owned()),
        };
        validate_path(&parsed, "root", &root)?;
        let acl = match options.acl.clone() {
            Some(acl) => acl,
            None => match parsed.take("acl") {
                Some(text) => {
                    ZkAcl::parse(&text).map_err(|error| parsed.invalid(error.message()))?
                }
                None => ZkAcl::Open,
            },
        };
        let tls_keys: &[&str] = if secure { &tls::KEYS } else { &[] };
        let known: Vec<&str> = ServiceOptions::KEYS
            .iter()
            .chain(&KEYS)
            .chain(tls_keys)
            .copied()
            .collect();
        parsed.finish(&known)?;
        if secure && tls.is_none() {
            return Err(parsed.invalid(
                "zk+tls needs tls_ca=FILE: the PEM certificate of the authority that signed the \
                 servers' certificates",
            ));
        }
        let chroot = match parsed.path() {
            "" | "/" => None,
            chroot => {
                validate_path(&parsed, "chroot", chroot)?;
                Some(chroot.to_owned())
            }
        };
        let digest = match (parsed.user(), parsed.password()) {
            (None, None) => None,
            (Some(user), Some(password)) => Some((user.to_owned(), password.to_owned())),
            _ => return Err(parsed.invalid("digest credentials must be USER:PASSWORD@")),
        };
        if acl.needs_auth() && digest.is_none() {
            return Err(parsed.invalid(
                "a creator ACL needs an authenticated session: add digest credentials \
                 (zk://USER:PASSWORD@HOST/...)",
            ));
        }
        let hosts: Vec<String> = parsed
            .hosts()
            .iter()
            .map(|host| host.address(2181))
            .collect();
        Ok(Self {
            hosts: hosts.join(","),
            chroot,
            root,
            session_timeout,
            digest,
            acl,
            service: resolved,
            tls,
            server: parsed.redacted().to_owned(),
        })
    }
}

/// An absolute path with no empty, `.` or `..` component and no trailing slash.
fn validate_path(url: &LockUrl, option: &str, path: &str) -> Result<()> {
    let components: Vec<&str> = path.strip_prefix('/').unwrap_or("").split('/').collect();
    let valid = path.starts_with('/')
        && components
            .iter()
            .all(|c| !c.is_empty() && *c != "." && *c != ".." && !c.chars().any(char::is_control));
    if valid {
        return Ok(());
    }
    Err(url.invalid(format!(
        "{option} {path:?} is not an absolute ZooKeeper path like /distlock \
         (no trailing slash, no empty, . or .. components)"
    )))
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("server", &self.server)
            .field("chroot", &self.chroot)
            .field("root", &self.root)
            .field("session_timeout", &self.session_timeout)
            .field("digest_user", &self.digest.as_ref().map(|(user, _)| user))
            .field("acl", &self.acl)
            .field("service", &self.service)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::ErrorKind;

    fn resolve(url: &str) -> Result<Settings> {
        Settings::resolve(url, &ServiceOptions::default(), &ZkOptions::default())
    }

    #[test]
    fn parses_hosts_chroot_credentials_and_options() {
        let settings = resolve(
            "zk://bob:p%40ss@h1:2181,h2/apps/x?session_timeout=4s&connect_timeout=1500ms\
             &operation_timeout=2s&root=/locks&acl=creator",
        )
        .expect("valid URL");
        assert_eq!(settings.hosts, "h1:2181,h2:2181");
        assert_eq!(settings.chroot.as_deref(), Some("/apps/x"));
        assert_eq!(settings.root, "/locks");
        assert_eq!(settings.session_timeout, Duration::from_secs(4));
        assert_eq!(
            settings.service.connect_timeout,
            Duration::from_millis(1500)
        );
        assert_eq!(settings.service.operation_timeout, Duration::from_secs(2));
        assert_eq!(settings.digest, Some(("bob".to_owned(), "p@ss".to_owned())));
        assert_eq!(settings.acl, ZkAcl::CreatorAll);
        assert!(!format!("{settings:?}").contains("p@ss"));
    }

    #[test]
    fn malformed_urls_are_invalid_input_without_leaking_passwords() {
        for bad in [
            "redis://h:1",
            "zk://",
            "zk://h:99999",
            "zk://h:1/chroot/",
            "zk://h:1?session_timeout=soon",
            "zk://h:1?session_timeout=0s",
            "zk://h:1?session_timeout=10",
            "zk://h:1?colour=blue",
            "zk://h:1?acl=world:anyone:q",
            "zk://h:1?root=x",
            "zk://bob@h:1",
            "zk://h:1?acl=creator",
            "zk://h:1/%zz",
        ] {
            let error = resolve(bad).expect_err(bad);
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad}: {error}");
        }
        let error = resolve("zk://bob:secret@h?x=1").expect_err("unknown parameter");
        assert!(!error.to_string().contains("secret"), "{error}");
    }

    #[test]
    fn tls_needs_a_readable_authority_and_only_its_own_scheme_takes_tls_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let not_pem = dir.path().join("not.pem");
        std::fs::write(&not_pem, "no certificate here").expect("write");
        let not_pem = not_pem.display();
        for (bad, problem) in [
            ("zk+tls://h:1".to_owned(), "needs tls_ca"),
            (
                "zk+tls://h:1?tls_ca=/nonexistent/ca.pem".to_owned(),
                "cannot be read",
            ),
            (
                format!("zk+tls://h:1?tls_ca={not_pem}&tls_cert={not_pem}"),
                "go together",
            ),
            (format!("zk://h:1?tls_ca={not_pem}"), "tls_ca"),
            (
                format!("zk+tls://h:1?tls_ca={not_pem}"),
                "tls_ca is not usable",
            ),
        ] {
            let error = resolve(&bad).expect_err(&bad);
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad}: {error}");
            assert!(error.to_string().contains(problem), "{bad}: {error}");
        }
    }
}
