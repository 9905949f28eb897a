//! The builder both Redis services share: a URL, the common service options, and Redis's own.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use lock_core::backend::{ServiceBuilder, ServiceOptions};
use lock_core::url::redact;
use lock_core::{Error, ErrorKind, Result};

use crate::settings::{RedisOptions, Settings, Topology};
use crate::{RedisLock, Redlock};

/// Configures and connects a Redis lock service: [`RedisLock`] (one master) from
/// [`RedisLock::builder`], [`Redlock`] (several independent masters) from
/// [`Redlock::builder`].
///
/// Every setting can also come from the URL (see the crate docs); a builder method overrides
/// the URL. The options every backend shares (timeouts, default lease and wait) are methods of
/// [`ServiceBuilder`]. Nothing is checked until `connect`. `Debug` hides passwords.
pub struct RedisLockBuilder<T> {
    url: String,
    service: ServiceOptions,
    redis: RedisOptions,
    service_type: PhantomData<fn() -> T>,
}

impl<T> RedisLockBuilder<T> {
    pub(crate) fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            service: ServiceOptions::default(),
            redis: RedisOptions::default(),
            service_type: PhantomData,
        }
    }

    /// The prefix inside every key's hash tag: the lock `NAME` lives at `{PREFIX:NAME}`
    /// (default `distlock`; URL `prefix`).
    #[must_use]
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.redis.prefix = Some(prefix.into());
        self
    }

    /// After each grant, waits (`WAIT`, on a connection of its own) until `replicas` replicas
    /// acknowledged it, at most `timeout`; fewer fail the acquisition, releasing the lock
    /// (URL `wait_replicas`, `wait_timeout`). Single master only.
    #[must_use]
    pub fn wait_for_replicas(mut self, replicas: usize, timeout: Duration) -> Self {
        self.redis.replicas = Some((replicas, timeout));
        self
    }

    /// How long a waiter keeps its place in a lock's queue without refreshing it (default
    /// 6 s; URL `waiter_ttl`). A waiter that crashed while first in line delays the next grant
    /// by at most this much.
    #[must_use]
    pub fn waiter_ttl(mut self, ttl: Duration) -> Self {
        self.redis.waiter_ttl = Some(ttl);
        self
    }

    /// Trusts this PEM root certificate for `rediss://` servers instead of the platform's
    /// roots (URL `tls_ca` names a file).
    #[must_use]
    pub fn tls_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.redis.root_certificate = Some(pem.into());
        self
    }

    /// Presents this client certificate and key (PEM) to `rediss://` servers that ask for one
    /// (`tls-auth-clients yes`; URL `tls_cert` and `tls_key` name files).
    #[must_use]
    pub fn tls_client_certificate(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.redis.client_certificate = Some((cert_pem.into(), key_pem.into()));
        self
    }

    /// Accepts a server whose `maxmemory-policy` may evict keys (refused by default: a held
    /// lock could vanish and be granted twice; URL `allow_eviction`).
    #[must_use]
    pub fn allow_eviction(mut self, allow: bool) -> Self {
        self.redis.allow_eviction = Some(allow);
        self
    }

    fn settings(&self) -> Result<Settings> {
        Settings::resolve(&self.url, &self.service, &self.redis)
    }
}

impl<T> ServiceBuilder for RedisLockBuilder<T> {
    fn service_options(&mut self) -> &mut ServiceOptions {
        &mut self.service
    }
}

impl RedisLockBuilder<RedisLock> {
    /// Connects to the master.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes the connection being opened.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a malformed URL or option, or several hosts (before any I/O);
    /// `Unavailable` when the server cannot be reached within the connect timeout or does not
    /// speak the Redis protocol; `Unsupported` when it may evict keys (see
    /// [`allow_eviction`](Self::allow_eviction)).
    pub async fn connect(self) -> Result<RedisLock> {
        let settings = self.settings()?;
        RedisLock::connect_with(settings).await
    }
}

impl RedisLockBuilder<Redlock> {
    /// Connects to every master; a majority must answer.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes the connections being opened.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a malformed URL or option, or `wait_for_replicas` (Redlock's masters
    /// are independent), before any I/O; `Unavailable` when fewer than a majority of masters
    /// can be reached within the connect timeout.
    pub async fn connect(self) -> Result<Redlock> {
        let settings = self.settings()?;
        if settings.topology != Topology::Masters {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "Redlock runs on independent masters (redis://HOST,HOST,HOST); a cluster or a \
                 Sentinel-managed master is one deployment: use RedisLock::builder for it",
            ));
        }
        if settings.replicas.is_some() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "wait_for_replicas applies to a single master; Redlock's masters are independent",
            ));
        }
        Redlock::connect_with(settings).await
    }
}

impl<T> fmt::Debug for RedisLockBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisLockBuilder")
            .field("url", &redact(&self.url))
            .field("service", &self.service)
            .field("key_prefix", &self.redis.prefix)
            .field("replicas", &self.redis.replicas)
            .field("waiter_ttl", &self.redis.waiter_ttl)
            .field(
                "tls_root_certificate",
                &self.redis.root_certificate.is_some(),
            )
            .field(
                "tls_client_certificate",
                &self.redis.client_certificate.is_some(),
            )
            .field("allow_eviction", &self.redis.allow_eviction)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_passwords() {
        let builder = RedisLock::builder("redis://app:s3cret@a:1,b:2?password=hunter2");
        let debug = format!("{builder:?}");
        assert!(
            !debug.contains("s3cret") && !debug.contains("hunter2"),
            "{debug}"
        );
        assert!(debug.contains("redis://app:***@a:1"), "{debug}");
    }
}
