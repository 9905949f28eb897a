//! The deployments a URL names, by scheme: `redis://` and `rediss://` name one master per
//! host (several make a Redlock), `redis+cluster://` a Redis Cluster by its seed nodes, and
//! `redis+sentinel://HOSTS/MASTER` the master a set of Sentinels names. The `rediss+`
//! forms connect with TLS.

use std::sync::Arc;

use lock_core::Result;
use lock_core::backend::Service;
use lock_core::url::LockUrl;
use redis::io::tcp::TcpSettings;
use redis::sentinel::{SentinelClientBuilder, SentinelServerType};
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo};

use super::tls::TlsFiles;
use crate::sentinels::Sentinels;
use crate::source::{ClusterSeeds, Server, Source};

/// The port Sentinels listen on unless the URL says otherwise.
const SENTINEL_PORT: u16 = 26379;
/// The port Redis listens on unless the URL says otherwise.
const REDIS_PORT: u16 = 6379;

/// What kind of deployment a scheme names, and whether it speaks TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Topology {
    /// One independent master per host.
    Masters,
    /// A Redis Cluster.
    Cluster,
    /// A master found through Sentinels.
    Sentinel,
}

/// The topology and TLS of `url`'s scheme.
pub(crate) fn topology_of(url: &LockUrl) -> Result<(Topology, bool)> {
    Ok(match url.scheme() {
        "redis" => (Topology::Masters, false),
        "rediss" => (Topology::Masters, true),
        "redis+cluster" => (Topology::Cluster, false),
        "rediss+cluster" => (Topology::Cluster, true),
        "redis+sentinel" => (Topology::Sentinel, false),
        "rediss+sentinel" => (Topology::Sentinel, true),
        other => {
            return Err(url.invalid(format!(
                "scheme {other:?} is not redis, rediss (TLS), redis+cluster or redis+sentinel \
                 (rediss+cluster, rediss+sentinel with TLS)"
            )));
        }
    })
}

/// The servers `url` names: one per host for `redis://`, one deployment otherwise.
/// `sentinel_password` authenticates to the Sentinels themselves.
pub(crate) fn servers_of(
    url: &LockUrl,
    service: &Service,
    files: &TlsFiles,
    sentinel_password: Option<&str>,
) -> Result<Vec<Server>> {
    let (topology, tls) = topology_of(url)?;
    if !tls && files.any() {
        return Err(url.invalid(format!(
            "certificates are for TLS: write {} to use them",
            url.scheme().replacen("redis", "rediss", 1)
        )));
    }
    if tls {
        // Several crates may install a rustls provider; an error means one is there.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    if sentinel_password.is_some() && topology != Topology::Sentinel {
        return Err(url.invalid("sentinel_password is for redis+sentinel:// URLs"));
    }
    // A peer that stops acknowledging (cable pulled, host frozen) fails the socket after the
    // operation timeout instead of the kernel's many minutes of retransmissions.
    let tcp = TcpSettings::default()
        .set_nodelay(true)
        .set_user_timeout(service.operation_timeout);
    let name = |hosts: &str| format!("{}://{hosts}", url.scheme());
    match topology {
        Topology::Masters => {
            let redis = redis_settings(url, url.path())?;
            url.hosts()
                .iter()
                .map(|host| {
                    let info = node_info(url, host, tls, &redis, &tcp)?;
                    let client = match files.certificates() {
                        Some(certificates) => redis::Client::build_with_tls(info, certificates),
                        None => redis::Client::open(info),
                    }
                    .map_err(|error| url.invalid(format!("TLS settings: {error}")))?;
                    Ok(Server {
                        source: Source::Direct(Box::new(client)),
                        name: name(&host.address(REDIS_PORT)),
                    })
                })
                .collect()
        }
        Topology::Cluster => {
            let redis = redis_settings(url, url.path())?;
            if redis.db() != 0 {
                return Err(url.invalid("a Redis Cluster has only database 0"));
            }
            let nodes = url
                .hosts()
                .iter()
                .map(|host| node_info(url, host, tls, &redis, &tcp))
                .collect::<Result<Vec<_>>>()?;
            let seeds = ClusterSeeds {
                nodes,
                certificates: files.certificates(),
            };
            Ok(vec![Server {
                source: Source::Cluster(Arc::new(seeds)),
                name: name(&hosts(url, REDIS_PORT)),
            }])
        }
        Topology::Sentinel => {
            let (master, db_path) = sentinel_path(url)?;
            let redis = redis_settings(url, db_path)?;
            let source = sentinel(url, &master, tls, files, &redis, &tcp, sentinel_password)?;
            Ok(vec![Server {
                source,
                name: format!("{}/{master}", name(&hosts(url, SENTINEL_PORT))),
            }])
        }
    }
}

/// `host:port,host:port` of `url`, for messages.
fn hosts(url: &LockUrl, default_port: u16) -> String {
    let addresses: Vec<String> = url
        .hosts()
        .iter()
        .map(|host| host.address(default_port))
        .collect();
    addresses.join(",")
}

/// The master name and the rest of a Sentinel URL's path: `/MASTER[/DB]`.
fn sentinel_path(url: &LockUrl) -> Result<(String, &str)> {
    let path = url.path().trim_start_matches('/');
    let (master, db) = match path.split_once('/') {
        Some((master, db)) => (master, db),
        None => (path, ""),
    };
    if master.is_empty() {
        return Err(url.invalid(
            "no master name: write redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER_NAME",
        ));
    }
    Ok((master.to_owned(), db))
}

/// The credentials of `url` and the database `db_path` names (`""` or `/N`).
fn redis_settings(url: &LockUrl, db_path: &str) -> Result<RedisConnectionInfo> {
    let db = match db_path.trim_start_matches('/') {
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
    Ok(redis)
}

/// The connection info of one Redis host.
fn node_info(
    url: &LockUrl,
    host: &lock_core::url::Host,
    tls: bool,
    redis: &RedisConnectionInfo,
    tcp: &TcpSettings,
) -> Result<ConnectionInfo> {
    let port = host.port.unwrap_or(REDIS_PORT);
    address(&host.name, port, tls)
        .into_connection_info()
        .map(|info: ConnectionInfo| {
            info.set_redis_settings(redis.clone())
                .set_tcp_settings(tcp.clone())
        })
        .map_err(|error| url.invalid(error))
}

fn address(host: &str, port: u16, tls: bool) -> ConnectionAddr {
    if tls {
        ConnectionAddr::TcpTls {
            host: host.to_owned(),
            port,
            insecure: false,
            tls_params: None,
        }
    } else {
        ConnectionAddr::Tcp(host.to_owned(), port)
    }
}

/// A Sentinel client for `master`: the URL's credentials, database and TLS go to the master;
/// the Sentinels are asked over the same transport, with `sentinel_password` if given.
fn sentinel(
    url: &LockUrl,
    master: &str,
    tls: bool,
    files: &TlsFiles,
    redis: &RedisConnectionInfo,
    tcp: &TcpSettings,
    sentinel_password: Option<&str>,
) -> Result<Source> {
    let sentinels = url
        .hosts()
        .iter()
        .map(|host| address(&host.name, host.port.unwrap_or(SENTINEL_PORT), tls));
    let invalid = |error: redis::RedisError| url.invalid(format!("Sentinel settings: {error}"));
    let mut builder = SentinelClientBuilder::new(sentinels, master, SentinelServerType::Master)
        .map_err(invalid)?
        .set_client_to_redis_db(redis.db())
        .set_client_to_redis_tcp_settings(tcp.clone())
        .set_client_to_sentinel_tcp_settings(tcp.clone());
    if let Some(user) = redis.username() {
        builder = builder.set_client_to_redis_username(user);
    }
    if let Some(password) = redis.password() {
        builder = builder.set_client_to_redis_password(password);
    }
    if let Some(password) = sentinel_password {
        builder = builder.set_client_to_sentinel_password(password);
    }
    if tls {
        builder = builder
            .set_client_to_redis_tls_mode(redis::TlsMode::Secure)
            .set_client_to_sentinel_tls_mode(redis::TlsMode::Secure);
        if let Some(certificates) = files.certificates() {
            builder = builder
                .set_client_to_redis_certificates(certificates.clone())
                .set_client_to_sentinel_certificates(certificates);
        }
    }
    let client = builder.build().map_err(invalid)?;
    Ok(Source::Sentinel(Arc::new(Sentinels::new(client, master))))
}
