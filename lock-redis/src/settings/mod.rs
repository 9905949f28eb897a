//! What a Redis URL (and the builder) configures, parsed and checked without I/O.

use std::time::Duration;

mod servers;
mod tls;

use lock_core::backend::{Service, ServiceOptions};
use lock_core::url::LockUrl;
use lock_core::{AcquireOptions, Error, Result};

use crate::keys::validate_prefix;
use crate::source::Server;
pub(crate) use servers::Topology;
use servers::{servers_of, topology_of};
use tls::TlsFiles;

/// The parameters a Redis URL takes besides [`ServiceOptions::KEYS`].
pub(crate) const KEYS: [&str; 9] = [
    "prefix",
    "waiter_ttl",
    "wait_replicas",
    "wait_timeout",
    "allow_eviction",
    "tls_ca",
    "tls_cert",
    "tls_key",
    "sentinel_password",
];

/// Settings the builder may set; each overrides the URL parameter of the same name.
#[derive(Clone, Debug, Default)]
pub(crate) struct RedisOptions {
    pub(crate) prefix: Option<String>,
    pub(crate) waiter_ttl: Option<Duration>,
    pub(crate) replicas: Option<(usize, Duration)>,
    pub(crate) allow_eviction: Option<bool>,
    pub(crate) root_certificate: Option<Vec<u8>>,
    /// A client certificate and its key (PEM), for servers that ask for one.
    pub(crate) client_certificate: Option<(Vec<u8>, Vec<u8>)>,
}

/// Everything a service needs to connect, checked.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) servers: Vec<Server>,
    /// What the URL's scheme names: masters, a cluster or a Sentinel-managed master.
    pub(crate) topology: Topology,
    pub(crate) service: Service,
    pub(crate) prefix: String,
    pub(crate) waiter_ttl: Duration,
    pub(crate) replicas: Option<(usize, Duration)>,
    pub(crate) allow_eviction: bool,
}

/// The default key prefix.
pub(crate) const DEFAULT_PREFIX: &str = "distlock";
/// The default time a queued waiter keeps its place without refreshing it.
pub(crate) const DEFAULT_WAITER_TTL: Duration = Duration::from_secs(6);

impl Settings {
    /// Parses `urls` (one URL with one or more hosts, or several URLs joined by commas) with
    /// the builder's overrides.
    pub(crate) fn resolve(
        urls: &str,
        service: &ServiceOptions,
        options: &RedisOptions,
    ) -> Result<Self> {
        let mut parsed = split_urls(urls)
            .iter()
            .map(|part| LockUrl::parse(part))
            .collect::<Result<Vec<_>>>()?;
        if parsed.is_empty() {
            return Err(Error::invalid_input(
                "no Redis URL given: write redis://HOST:PORT (several hosts for Redlock)",
            ));
        }
        // Parameters may follow any one of several URLs (usually the last).
        let with_params = parsed
            .iter()
            .position(|url| !url.remaining().is_empty())
            .unwrap_or(0);
        let mut url = parsed.remove(with_params);
        let resolved = service.resolve(&mut url)?;
        let prefix = match options.prefix.clone() {
            Some(prefix) => prefix,
            None => url
                .take("prefix")
                .unwrap_or_else(|| DEFAULT_PREFIX.to_owned()),
        };
        validate_prefix(&prefix).map_err(|error| url.invalid(error.message()))?;
        let waiter_ttl = match options.waiter_ttl {
            Some(ttl) => ttl,
            None => url
                .take_duration("waiter_ttl")?
                .unwrap_or(DEFAULT_WAITER_TTL),
        };
        if waiter_ttl < Duration::from_millis(300) {
            return Err(url.invalid(format!(
                "waiter_ttl {waiter_ttl:?} is below 300ms: waiters could not refresh their place in time"
            )));
        }
        let replicas = match options.replicas {
            Some(replicas) => Some(replicas),
            None => read_replicas(&mut url)?,
        };
        if replicas.is_some_and(|(count, timeout)| count == 0 || timeout.is_zero()) {
            return Err(
                url.invalid("wait_replicas needs at least one replica and a non-zero wait_timeout")
            );
        }
        let longest = AcquireOptions::MAX_LEASE;
        if waiter_ttl > longest || replicas.is_some_and(|(_, timeout)| timeout > longest) {
            return Err(url.invalid(format!(
                "waiter_ttl and wait_timeout may be at most {longest:?}, the longest lease"
            )));
        }
        let allow_eviction = match options.allow_eviction {
            Some(allow) => allow,
            None => url
                .take_parsed("allow_eviction", "true or false")?
                .unwrap_or(false),
        };
        let tls = TlsFiles {
            root: match &options.root_certificate {
                Some(pem) => Some(pem.clone()),
                None => url.take_file("tls_ca")?,
            },
            client: match &options.client_certificate {
                Some(pair) => Some(pair.clone()),
                None => url.take_client_identity()?,
            },
        };
        let sentinel_password = url.take("sentinel_password");
        let known: Vec<&str> = ServiceOptions::KEYS.iter().chain(&KEYS).copied().collect();
        url.finish(&known)?;
        let (topology, _) = topology_of(&url)?;
        parsed.insert(with_params, url);
        let mut servers = Vec::new();
        for url in &parsed {
            url.finish(&known)?;
            if topology_of(url)?.0 != topology
                || (topology != Topology::Masters && !servers.is_empty())
            {
                return Err(url.invalid(
                    "one URL per cluster or Sentinel set: list its hosts as HOST:PORT,HOST:PORT",
                ));
            }
            let password = sentinel_password.as_deref();
            servers.extend(servers_of(url, &resolved, &tls, password)?);
        }
        Ok(Self {
            servers,
            topology,
            service: resolved,
            prefix,
            waiter_ttl,
            replicas,
            allow_eviction,
        })
    }
}

/// `redis://a,redis://b` as two URLs (Redlock's masters written out in full); a URL with
/// several hosts stays one.
fn split_urls(urls: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for piece in urls.split(',') {
        let piece = piece.trim();
        match parts.last_mut() {
            Some(last) if !piece.contains("://") => {
                last.push(',');
                last.push_str(piece);
            }
            _ if piece.is_empty() => {}
            _ => parts.push(piece.to_owned()),
        }
    }
    parts
}

fn read_replicas(url: &mut LockUrl) -> Result<Option<(usize, Duration)>> {
    let count: Option<usize> = url.take_parsed("wait_replicas", "a number of replicas")?;
    let timeout = url.take_duration("wait_timeout")?;
    match (count, timeout) {
        (None, None) => Ok(None),
        (Some(count), timeout) => Ok(Some((count, timeout.unwrap_or(Duration::from_millis(500))))),
        (None, Some(_)) => Err(url.invalid("wait_timeout needs wait_replicas")),
    }
}

#[cfg(test)]
mod tests;
