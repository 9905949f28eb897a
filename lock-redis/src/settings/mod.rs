//! What a Redis URL (and the builder) configures, parsed and checked without I/O.

use std::time::Duration;

use lock_core::backend::{Service, ServiceOptions};
use lock_core::url::LockUrl;
use lock_core::{AcquireOptions, Error, Result};
use redis::io::tcp::TcpSettings;
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo};

use crate::keys::validate_prefix;

/// The parameters a Redis URL takes besides [`ServiceOptions::KEYS`].
pub(crate) const KEYS: [&str; 8] = [
    "prefix",
    "waiter_ttl",
    "wait_replicas",
    "wait_timeout",
    "allow_eviction",
    "tls_ca",
    "tls_cert",
    "tls_key",
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

/// The PEM files of a `rediss://` connection: the roots to trust instead of the platform's,
/// and a client certificate with its key.
#[derive(Clone, Debug, Default)]
struct TlsFiles {
    root: Option<Vec<u8>>,
    client: Option<(Vec<u8>, Vec<u8>)>,
}

/// Everything a service needs to connect, checked.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) servers: Vec<Server>,
    pub(crate) service: Service,
    pub(crate) prefix: String,
    pub(crate) waiter_ttl: Duration,
    pub(crate) replicas: Option<(usize, Duration)>,
    pub(crate) allow_eviction: bool,
}

/// One Redis server to connect to.
#[derive(Clone)]
pub(crate) struct Server {
    pub(crate) client: redis::Client,
    /// `redis://host:port`, for messages (no password).
    pub(crate) name: String,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
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
                None => read_pem(&mut url, "tls_ca")?,
            },
            client: match &options.client_certificate {
                Some(pair) => Some(pair.clone()),
                None => read_client_certificate(&mut url)?,
            },
        };
        let known: Vec<&str> = ServiceOptions::KEYS.iter().chain(&KEYS).copied().collect();
        url.finish(&known)?;
        parsed.insert(with_params, url);
        let mut servers = Vec::new();
        for url in &parsed {
            url.finish(&known)?;
            servers.extend(servers_of(url, &resolved, &tls)?);
        }
        Ok(Self {
            servers,
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

/// The contents of the file parameter `key` names.
fn read_pem(url: &mut LockUrl, key: &str) -> Result<Option<Vec<u8>>> {
    let Some(path) = url.take(key) else {
        return Ok(None);
    };
    std::fs::read(&path)
        .map(Some)
        .map_err(|error| url.invalid(format!("{key} {path:?} cannot be read: {error}")))
}

fn read_client_certificate(url: &mut LockUrl) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    match (read_pem(url, "tls_cert")?, read_pem(url, "tls_key")?) {
        (Some(cert), Some(key)) => Ok(Some((cert, key))),
        (None, None) => Ok(None),
        _ => Err(url.invalid(
            "a client certificate and its key go together: give both tls_cert and tls_key",
        )),
    }
}

/// A client per host of `url`, with its credentials, database and TLS settings.
fn servers_of(url: &LockUrl, service: &Service, files: &TlsFiles) -> Result<Vec<Server>> {
    let tls = match url.scheme() {
        "redis" => false,
        "rediss" => true,
        other => {
            return Err(url.invalid(format!("scheme {other:?} is not redis or rediss (TLS)")));
        }
    };
    if !tls && (files.root.is_some() || files.client.is_some()) {
        return Err(url.invalid("certificates are for TLS: write rediss:// to use them"));
    }
    let db = match url.path().trim_start_matches('/') {
        "" => 0,
        db => db
            .parse::<i64>()
            .map_err(|_| url.invalid(format!("database {db:?} is not a number")))?,
    };
    let mut redis = RedisConnectionInfo::default().set_db(db);
    if let Some(user) = url.user() {
        redis = redis.set_username(user);
    }
    if let Some(password) = url.password() {
        redis = redis.set_password(password);
    }
    // A peer that stops acknowledging (cable pulled, host frozen) fails the socket after the
    // operation timeout instead of the kernel's many minutes of retransmissions.
    let tcp = TcpSettings::default()
        .set_nodelay(true)
        .set_user_timeout(service.operation_timeout);
    url.hosts()
        .iter()
        .map(|host| {
            let port = host.port.unwrap_or(6379);
            let name = format!("{}://{}", url.scheme(), host.address(6379));
            let addr = if tls {
                // Several crates may install a rustls provider; an error means one is there.
                let _ = rustls::crypto::ring::default_provider().install_default();
                ConnectionAddr::TcpTls {
                    host: host.name.clone(),
                    port,
                    insecure: false,
                    tls_params: None,
                }
            } else {
                ConnectionAddr::Tcp(host.name.clone(), port)
            };
            let info = addr
                .into_connection_info()
                .map(|info: ConnectionInfo| {
                    info.set_redis_settings(redis.clone())
                        .set_tcp_settings(tcp.clone())
                })
                .map_err(|error| url.invalid(error))?;
            let client = if tls && (files.root.is_some() || files.client.is_some()) {
                let certificates = redis::TlsCertificates {
                    client_tls: files.client.clone().map(|(client_cert, client_key)| {
                        redis::ClientTlsConfig {
                            client_cert,
                            client_key,
                        }
                    }),
                    root_cert: files.root.clone(),
                };
                redis::Client::build_with_tls(info, certificates)
            } else {
                redis::Client::open(info)
            }
            .map_err(|error| url.invalid(format!("TLS settings: {error}")))?;
            Ok(Server { client, name })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(urls: &str) -> Result<Settings> {
        Settings::resolve(urls, &ServiceOptions::default(), &RedisOptions::default())
    }

    #[test]
    fn one_url_many_hosts_or_many_urls_are_the_same_masters() {
        let joined = resolve("redis://:pw@a:1,b:2,c?prefix=x").expect("valid");
        let listed =
            resolve("redis://:pw@a:1?prefix=x,redis://:pw@b:2,redis://:pw@c").expect("valid");
        let names = |s: &Settings| s.servers.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&joined),
            ["redis://a:1", "redis://b:2", "redis://c:6379"]
        );
        assert_eq!(names(&joined), names(&listed));
        assert_eq!(joined.prefix, "x");
    }

    #[test]
    fn parameters_are_read_and_checked() {
        let settings = resolve(
            "rediss://h/3?wait_replicas=2&wait_timeout=250ms&waiter_ttl=9s&allow_eviction=true",
        )
        .expect("valid");
        assert_eq!(settings.replicas, Some((2, Duration::from_millis(250))));
        assert_eq!(settings.waiter_ttl, Duration::from_secs(9));
        assert!(settings.allow_eviction);
        for bad in [
            "redis://h?prefix=a%7Bb",
            "redis://h?waiter_ttl=10ms",
            "redis://h?wait_replicas=0",
            "redis://h?wait_timeout=1s",
            "redis://h/zero",
            "http://h",
            "",
        ] {
            let error = resolve(bad).expect_err(bad);
            assert_eq!(
                error.kind(),
                lock_core::ErrorKind::InvalidInput,
                "{bad}: {error}"
            );
        }
    }
}
