//! Connection and recipe settings, built in code or parsed from a `zk://` URL.

use std::fmt;
use std::time::Duration;

use lock_core::{Error, Result};

use crate::ZkAcl;

/// Where and how to connect, and where lock nodes live. Build with [`ZkConfig::builder`] or
/// [`ZkConfig::from_url`]; `Debug` hides the digest password.
#[derive(Clone, PartialEq, Eq)]
pub struct ZkConfig {
    pub(crate) hosts: String,
    pub(crate) chroot: Option<String>,
    pub(crate) root: String,
    pub(crate) session_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) operation_timeout: Option<Duration>,
    pub(crate) digest: Option<(String, String)>,
    pub(crate) acl: ZkAcl,
}

impl ZkConfig {
    /// The default parent of every lock's node: `/distlock`.
    pub const DEFAULT_ROOT: &'static str = "/distlock";
    /// The default session timeout asked of the server (which clamps it to 2 to 20 ticks).
    pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default time allowed to establish a session.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

    /// A builder for the ensemble `hosts` (`host:port,host:port`; a host without a port uses 2181).
    pub fn builder(hosts: impl Into<String>) -> ZkConfigBuilder {
        ZkConfigBuilder {
            config: Self {
                hosts: hosts.into(),
                chroot: None,
                root: Self::DEFAULT_ROOT.to_owned(),
                session_timeout: Self::DEFAULT_SESSION_TIMEOUT,
                connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
                operation_timeout: None,
                digest: None,
                acl: ZkAcl::Open,
            },
        }
    }

    /// Parses `zk://[user:password@]host:port[,host:port...][/chroot][?options]`; see the crate
    /// docs for the options.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) naming what is wrong.
    pub fn from_url(url: &str) -> Result<Self> {
        crate::url::parse(url)
    }

    /// The ensemble's `host:port` list.
    pub fn hosts(&self) -> &str {
        &self.hosts
    }

    /// The session timeout asked of the server.
    pub fn session_timeout(&self) -> Duration {
        self.session_timeout
    }

    /// The time allowed to establish a session.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The longest a single request may take before it fails with `Unavailable`: the configured
    /// value, or the session timeout (after which the session is gone anyway).
    pub fn operation_timeout(&self) -> Duration {
        self.operation_timeout.unwrap_or(self.session_timeout)
    }

    /// The parent of every lock's node, below the chroot.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The chroot every path is relative to, if any.
    pub fn chroot(&self) -> Option<&str> {
        self.chroot.as_deref()
    }
}

impl fmt::Debug for ZkConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZkConfig")
            .field("hosts", &self.hosts)
            .field("chroot", &self.chroot)
            .field("root", &self.root)
            .field("session_timeout", &self.session_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("operation_timeout", &self.operation_timeout())
            .field("digest_user", &self.digest.as_ref().map(|(user, _)| user))
            .field("acl", &self.acl)
            .finish()
    }
}

/// Builds a [`ZkConfig`], validating it in [`build`](ZkConfigBuilder::build).
#[derive(Clone, Debug)]
pub struct ZkConfigBuilder {
    config: ZkConfig,
}

impl ZkConfigBuilder {
    /// Every path is relative to `chroot` (created as a persistent node if missing).
    #[must_use]
    pub fn chroot(mut self, chroot: impl Into<String>) -> Self {
        self.config.chroot = Some(chroot.into());
        self
    }

    /// The parent of every lock's node (default [`ZkConfig::DEFAULT_ROOT`]).
    #[must_use]
    pub fn root(mut self, root: impl Into<String>) -> Self {
        self.config.root = root.into();
        self
    }

    /// The session timeout to ask for: how long the ensemble keeps a silent client's nodes.
    #[must_use]
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.config.session_timeout = timeout;
        self
    }

    /// How long establishing a session may take before `Unavailable`.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }

    /// How long one request may take before `Unavailable` (default: the session timeout).
    #[must_use]
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.config.operation_timeout = Some(timeout);
        self
    }

    /// Authenticates the session with ZooKeeper's `digest` scheme.
    #[must_use]
    pub fn digest(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.config.digest = Some((user.into(), password.into()));
        self
    }

    /// The ACL of created nodes (default [`ZkAcl::Open`]).
    #[must_use]
    pub fn acl(mut self, acl: ZkAcl) -> Self {
        self.config.acl = acl;
        self
    }

    /// Validates and returns the configuration.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for an empty or malformed
    /// host list, a malformed path, a zero timeout, or a creator ACL without digest auth.
    pub fn build(mut self) -> Result<ZkConfig> {
        let config = &mut self.config;
        config.hosts = normalize_hosts(&config.hosts)?;
        validate_path("root", &config.root)?;
        if let Some(chroot) = &config.chroot {
            validate_path("chroot", chroot)?;
        }
        let timeouts = [
            ("session_timeout", config.session_timeout),
            ("connect_timeout", config.connect_timeout),
            ("operation_timeout", config.operation_timeout()),
        ];
        for (option, value) in timeouts {
            if value.is_zero() {
                return Err(Error::invalid_input(format!(
                    "{option} is zero: give it a positive duration"
                )));
            }
        }
        if config.acl.needs_auth() && config.digest.is_none() {
            return Err(Error::invalid_input(
                "a creator ACL needs an authenticated session: add digest credentials \
                 (zk://user:password@host/...)",
            ));
        }
        Ok(self.config)
    }
}

/// Checks every `host[:port]` and adds the default port where it is missing.
fn normalize_hosts(hosts: &str) -> Result<String> {
    if hosts.trim().is_empty() {
        return Err(Error::invalid_input(
            "no ZooKeeper host given: write zk://host:2181",
        ));
    }
    let mut normalized = Vec::new();
    for host in hosts.split(',') {
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) => (name, port),
            None => (host, "2181"),
        };
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._[]:".contains(c));
        if !valid_name || port.parse::<u16>().map_or(true, |port| port == 0) {
            return Err(Error::invalid_input(format!(
                "{host:?} is not host:port (in host list {hosts:?})"
            )));
        }
        normalized.push(format!("{name}:{port}"));
    }
    Ok(normalized.join(","))
}

/// An absolute path with no empty, `.` or `..` component and no trailing slash.
fn validate_path(option: &str, path: &str) -> Result<()> {
    let components: Vec<&str> = path.strip_prefix('/').unwrap_or("").split('/').collect();
    let valid = path.starts_with('/')
        && components
            .iter()
            .all(|c| !c.is_empty() && *c != "." && *c != ".." && !c.chars().any(char::is_control));
    if !valid {
        return Err(Error::invalid_input(format!(
            "{option} {path:?} is not an absolute ZooKeeper path like /distlock \
             (no trailing slash, no empty, . or .. components)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_validates_and_defaults() {
        let config = ZkConfig::builder("a:1,b").build().expect("valid config");
        assert_eq!(config.hosts(), "a:1,b:2181");
        assert_eq!(config.root(), "/distlock");
        assert_eq!(config.operation_timeout(), config.session_timeout());
        for bad in [
            ZkConfig::builder(""),
            ZkConfig::builder("a:x"),
            ZkConfig::builder("a:1").root("distlock"),
            ZkConfig::builder("a:1").root("/a/../b"),
            ZkConfig::builder("a:1").chroot("/a/"),
            ZkConfig::builder("a:1").session_timeout(Duration::ZERO),
            ZkConfig::builder("a:1").acl(ZkAcl::CreatorAll),
        ] {
            let error = bad.clone().build().expect_err("invalid config accepted");
            assert_eq!(error.kind(), lock_core::ErrorKind::InvalidInput, "{bad:?}");
        }
    }

    #[test]
    fn debug_hides_the_password() {
        let config = ZkConfig::builder("a:1")
            .digest("bob", "hunter2")
            .build()
            .expect("valid config");
        let shown = format!("{config:?}");
        assert!(
            shown.contains("bob") && !shown.contains("hunter2"),
            "{shown}"
        );
    }
}
