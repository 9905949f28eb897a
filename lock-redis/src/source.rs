//! Where a service's commands go, and how each kind of deployment opens a connection: one
//! server at a fixed address, the master a set of Sentinels names, or a Redis Cluster.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{Error, ErrorKind, Result};
use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::{AsyncConnectionConfig, ConnectionInfo, TlsCertificates};

use crate::connection::Connection;
use crate::error::{BACKEND, from_redis, timed_out};
use crate::scripts::Channels;
use crate::sentinels::Sentinels;

/// One deployment to connect to, as a URL named it.
#[derive(Clone)]
pub(crate) struct Server {
    pub(crate) source: Source,
    /// `redis://host:port` (or the Sentinel or Cluster URL's hosts), for messages; no password.
    pub(crate) name: String,
}

/// How to reach the server that holds a lock's keys.
#[derive(Clone)]
pub(crate) enum Source {
    /// One server at a fixed address.
    Direct(Box<redis::Client>),
    /// The master the Sentinels name, asked afresh for every new connection; connections
    /// opened before the Sentinels announced a switch are replaced.
    Sentinel(Arc<Sentinels>),
    /// A Redis Cluster, discovered from its seed nodes.
    Cluster(Arc<ClusterSeeds>),
}

/// What a cluster client is built from: the seed nodes (with credentials and TLS) and the
/// certificates of a `rediss+cluster://` URL.
#[derive(Clone)]
pub(crate) struct ClusterSeeds {
    pub(crate) nodes: Vec<ConnectionInfo>,
    pub(crate) certificates: Option<TlsCertificates>,
}

impl ClusterSeeds {
    /// A builder with the seeds, credentials and TLS settings; `limit` bounds each connect
    /// and each reply, and a command is retried (after `MOVED`, `ASK`, `TRYAGAIN` or a lost
    /// node) only within it.
    pub(crate) fn builder(&self, limit: Duration) -> ClusterClientBuilder {
        let mut builder = ClusterClientBuilder::new(self.nodes.clone())
            .connection_timeout(limit)
            .response_timeout(limit)
            .retries(6)
            .min_retry_wait(5)
            .max_retry_wait(limit.as_millis().try_into().unwrap_or(u64::MAX) / 4);
        if let Some(first) = self.nodes.first() {
            let redis = first.redis_settings();
            if let Some(user) = redis.username() {
                builder = builder.username(user);
            }
            if let Some(password) = redis.password() {
                builder = builder.password(password);
            }
            if let redis::ConnectionAddr::TcpTls { .. } = first.addr() {
                builder = builder.tls(redis::TlsMode::Secure);
            }
        }
        if let Some(certificates) = &self.certificates {
            builder = builder.certs(certificates.clone());
        }
        builder
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl Server {
    /// How wake-ups travel: sharded pub/sub in a cluster (to the shard owning the lock's
    /// slot), plain pub/sub elsewhere.
    pub(crate) fn channels(&self) -> Channels {
        match self.source {
            Source::Cluster(_) => Channels::Sharded,
            _ => Channels::Plain,
        }
    }

    /// How many master switches the Sentinels announced (always 0 elsewhere): a connection
    /// opened when it was lower goes to a former master.
    pub(crate) fn generation(&self) -> u64 {
        match &self.source {
            Source::Sentinel(sentinels) => sentinels.switches(),
            _ => 0,
        }
    }

    /// A receiver that changes on every master switch the Sentinels announce; `None` for
    /// other deployments.
    pub(crate) fn switches(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        match &self.source {
            Source::Sentinel(sentinels) => Some(sentinels.subscribe()),
            _ => None,
        }
    }

    /// A client of the one server to talk to now: the fixed address, or the master the
    /// Sentinels name (checked with `ROLE`). `None` for a cluster, which has no one server.
    pub(crate) async fn client(&self, limit: Duration) -> Result<Option<redis::Client>> {
        match &self.source {
            Source::Direct(client) => Ok(Some(redis::Client::clone(client))),
            Source::Sentinel(sentinels) => {
                sentinels.watch(limit);
                let asking = async { sentinels.client.lock().await.async_get_client().await };
                match tokio::time::timeout(limit, asking).await {
                    Ok(Ok(client)) => Ok(Some(client)),
                    Ok(Err(error)) => Err(self.no_master(error)),
                    Err(_) => Err(timed_out(&self.name, limit)),
                }
            }
            Source::Cluster(_) => Ok(None),
        }
    }

    /// Opens a multiplexed connection within `limit`.
    pub(crate) async fn open(&self, limit: Duration) -> Result<Connection> {
        let started = tokio::time::Instant::now();
        // Boxed: the cluster and Sentinel clients' connect futures are deeply nested types,
        // which would otherwise become part of every caller's future.
        let opening = Box::pin(async {
            match self.client(limit).await? {
                Some(client) => {
                    let config = AsyncConnectionConfig::new()
                        .set_connection_timeout(Some(limit.saturating_sub(started.elapsed())))
                        .set_response_timeout(None);
                    let connecting = client.get_multiplexed_async_connection_with_config(&config);
                    connecting
                        .await
                        .map(Connection::Server)
                        .map_err(|error| from_redis(error, &self.name))
                }
                None => self.open_cluster(limit).await,
            }
        });
        match tokio::time::timeout(limit, opening).await {
            Ok(opened) => opened,
            Err(_) => Err(timed_out(&self.name, limit)),
        }
    }

    async fn open_cluster(&self, limit: Duration) -> Result<Connection> {
        let Source::Cluster(seeds) = &self.source else {
            return Err(Error::new(ErrorKind::Backend, "not a cluster").with_backend(BACKEND));
        };
        let client: ClusterClient = seeds
            .builder(limit)
            .build()
            .map_err(|error| from_redis(error, &self.name))?;
        client
            .get_async_connection()
            .await
            .map(Connection::Cluster)
            .map_err(|error| from_redis(error, &self.name))
    }

    /// The error for Sentinels that named no reachable master.
    fn no_master(&self, error: redis::RedisError) -> Error {
        let message = format!(
            "the Sentinels at {} named no reachable master: {error}",
            self.name
        );
        Error::new(ErrorKind::Unavailable, message)
            .with_backend(BACKEND)
            .with_server(&self.name)
            .with_source(error)
    }
}
