//! The builder: server URLs, key prefix, timeouts, replica acknowledgements, Redlock drift.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, Error, Result};

use crate::keys::validate_prefix;
use crate::{RedisLock, Redlock};

/// Configures and connects a Redis lock service: one master ([`RedisLock`]) or several
/// independent masters ([`Redlock`]).
///
/// `Debug` output shows the URLs with their passwords replaced by `***`.
#[derive(Clone)]
pub struct RedisLockBuilder {
    pub(crate) urls: Vec<String>,
    pub(crate) key_prefix: String,
    pub(crate) connect_timeout: Duration,
    pub(crate) command_timeout: Duration,
    pub(crate) replicas: Option<(usize, Duration)>,
    pub(crate) clock_drift_factor: f64,
    pub(crate) waiter_ttl: Duration,
    pub(crate) root_certificate: Option<Vec<u8>>,
}

impl RedisLockBuilder {
    /// The default connect and per-command timeout.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
    /// The default key prefix.
    pub const DEFAULT_PREFIX: &'static str = "distlock";
    /// The default time a queued waiter keeps its place without refreshing it.
    pub const DEFAULT_WAITER_TTL: Duration = Duration::from_secs(6);
    /// The default Redlock clock drift factor (1% of the lease).
    pub const DEFAULT_DRIFT_FACTOR: f64 = 0.01;

    /// A builder for the server(s) `urls` names: one `redis://` or `rediss://` URL, or several
    /// separated by commas for Redlock (`redis://a:6379,redis://b:6379,redis://c:6379`).
    pub fn new(urls: &str) -> Self {
        Self {
            urls: urls
                .split(',')
                .map(str::trim)
                .filter(|url| !url.is_empty())
                .map(str::to_owned)
                .collect(),
            key_prefix: Self::DEFAULT_PREFIX.to_owned(),
            connect_timeout: Self::DEFAULT_TIMEOUT,
            command_timeout: Self::DEFAULT_TIMEOUT,
            replicas: None,
            clock_drift_factor: Self::DEFAULT_DRIFT_FACTOR,
            waiter_ttl: Self::DEFAULT_WAITER_TTL,
            root_certificate: None,
        }
    }

    /// Adds another master (Redlock).
    #[must_use]
    pub fn master(mut self, url: impl Into<String>) -> Self {
        self.urls.push(url.into());
        self
    }

    /// The prefix inside every key's hash tag: the lock `NAME` lives at `{PREFIX:NAME}`.
    #[must_use]
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = prefix.into();
        self
    }

    /// How long opening a connection may take before `Unavailable`.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one command may wait for its reply before `Unavailable`. In Redlock mode this
    /// is the per-master timeout: a paused master delays an acquisition by at most this much.
    #[must_use]
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.command_timeout = timeout;
        self
    }

    /// After each grant, runs `WAIT replicas timeout` and fails the acquisition (releasing the
    /// lock) unless at least `replicas` replicas acknowledged it: a failover then cannot hand the
    /// lock to a second holder unless those replicas die too.
    #[must_use]
    pub fn wait_for_replicas(mut self, replicas: usize, timeout: Duration) -> Self {
        self.replicas = Some((replicas, timeout));
        self
    }

    /// How long a waiter keeps its place in a lock's queue without refreshing it (waiters
    /// refresh every third of it). A waiter that crashed while first in line delays the next
    /// grant by at most this much.
    #[must_use]
    pub fn waiter_ttl(mut self, ttl: Duration) -> Self {
        self.waiter_ttl = ttl;
        self
    }

    /// Trusts this PEM root certificate for `rediss://` servers instead of the platform's
    /// roots (a private CA).
    #[must_use]
    pub fn tls_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificate = Some(pem.into());
        self
    }

    /// The Redlock clock drift factor: a grant is valid for `lease - elapsed - lease * factor -
    /// 2 ms`.
    #[must_use]
    pub fn clock_drift_factor(mut self, factor: f64) -> Self {
        self.clock_drift_factor = factor;
        self
    }

    /// How to reach the master at `url`.
    pub(crate) fn target<'a>(&'a self, url: &'a str) -> crate::node::Target<'a> {
        crate::node::Target {
            url,
            connect_timeout: self.connect_timeout,
            timeout: self.command_timeout,
            root_certificate: self.root_certificate.as_deref(),
        }
    }

    /// Checks every option without any I/O.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.urls.is_empty() {
            return Err(Error::invalid_input(
                "no Redis URL given: write redis://HOST:PORT (several, comma-separated, for Redlock)",
            ));
        }
        validate_prefix(&self.key_prefix)?;
        for url in &self.urls {
            crate::node::parse_client(url, self.root_certificate.as_deref())?;
        }
        for (what, timeout) in [
            ("connect timeout", self.connect_timeout),
            ("command timeout", self.command_timeout),
        ] {
            if timeout.is_zero() {
                return Err(Error::invalid_input(format!("{what} must not be zero")));
            }
        }
        if self.waiter_ttl < Duration::from_millis(300) {
            return Err(Error::invalid_input(format!(
                "waiter ttl {:?} is below 300 ms: waiters could not refresh their place in time",
                self.waiter_ttl
            )));
        }
        if let Some((replicas, timeout)) = self.replicas {
            if replicas == 0 || timeout.is_zero() {
                return Err(Error::invalid_input(
                    "wait_for_replicas needs at least one replica and a non-zero timeout",
                ));
            }
        }
        if !(0.0..0.5).contains(&self.clock_drift_factor) {
            return Err(Error::invalid_input(format!(
                "clock drift factor {} must be in [0, 0.5)",
                self.clock_drift_factor
            )));
        }
        Ok(())
    }

    /// Connects a single-master lock ([`RedisLock`]).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes the connection being opened.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for bad options or several URLs (before any I/O); `Unavailable` when the
    /// server cannot be reached within the connect timeout.
    pub async fn connect_single(self) -> Result<RedisLock> {
        self.validate()?;
        if self.urls.len() != 1 {
            return Err(Error::invalid_input(format!(
                "{} URLs given for a single-master lock; use connect_redlock for several masters",
                self.urls.len()
            )));
        }
        RedisLock::connect_with(self).await
    }

    /// Connects a Redlock over every URL given (independent masters, majority quorum).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes the connections being opened.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for bad options or replica acknowledgements (not supported with Redlock),
    /// before any I/O; `Unavailable` when fewer than a majority of masters can be reached within
    /// the connect timeout.
    pub async fn connect_redlock(self) -> Result<Redlock> {
        self.validate()?;
        Redlock::connect_with(self).await
    }

    /// Connects a [`RedisLock`] for one URL, a [`Redlock`] for several.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes the connections being opened.
    ///
    /// # Errors
    ///
    /// As [`connect_single`](Self::connect_single) and [`connect_redlock`](Self::connect_redlock).
    pub async fn connect(self) -> Result<Arc<dyn DistributedLock>> {
        if self.urls.len() > 1 {
            Ok(Arc::new(self.connect_redlock().await?))
        } else {
            Ok(Arc::new(self.connect_single().await?))
        }
    }
}

impl fmt::Debug for RedisLockBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let urls: Vec<String> = self.urls.iter().map(|url| redact(url)).collect();
        f.debug_struct("RedisLockBuilder")
            .field("urls", &urls)
            .field("key_prefix", &self.key_prefix)
            .field("connect_timeout", &self.connect_timeout)
            .field("command_timeout", &self.command_timeout)
            .field("replicas", &self.replicas)
            .field("clock_drift_factor", &self.clock_drift_factor)
            .field("waiter_ttl", &self.waiter_ttl)
            .field("tls_root_certificate", &self.root_certificate.is_some())
            .finish()
    }
}

/// `url` with any password replaced by `***` (`redis://user:***@host`).
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    let user = rest[..at].split(':').next().unwrap_or_default();
    format!("{scheme}://{user}:***@{}", &rest[at + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_passwords() {
        let builder =
            RedisLockBuilder::new("redis://app:s3cret@a:1,rediss://:hunter2@b:2/0,redis://c:3");
        let debug = format!("{builder:?}");
        assert!(
            !debug.contains("s3cret") && !debug.contains("hunter2"),
            "{debug}"
        );
        assert!(debug.contains("redis://app:***@a:1"), "{debug}");
        assert!(debug.contains("rediss://:***@b:2/0"), "{debug}");
        assert!(debug.contains("redis://c:3"), "{debug}");
    }

    #[test]
    fn comma_separated_urls_become_masters() {
        let builder = RedisLockBuilder::new("redis://a:1, redis://b:2,,redis://c:3");
        assert_eq!(builder.urls.len(), 3);
        assert_eq!(builder.master("redis://d:4").urls.len(), 4);
    }

    #[test]
    fn bad_options_are_invalid_input() {
        let base = || RedisLockBuilder::new("redis://127.0.0.1:1");
        let cases = [
            RedisLockBuilder::new(""),
            base().key_prefix("a{b"),
            base().command_timeout(Duration::ZERO),
            base().wait_for_replicas(0, Duration::from_millis(10)),
            base().clock_drift_factor(0.7),
            base().waiter_ttl(Duration::from_millis(10)),
        ];
        for builder in cases {
            let error = builder.validate().expect_err("accepted");
            assert_eq!(error.kind(), lock_core::ErrorKind::InvalidInput);
        }
    }
}
