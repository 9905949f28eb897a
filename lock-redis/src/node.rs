//! One Redis master: a reconnecting multiplexed connection, the lock scripts, and timeouts on
//! every call.

use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use lock_core::{Error, Result};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisResult, Script};

use crate::config::redact;
use crate::error::{from_redis, timed_out, unexpected_reply};
use crate::keys::LockKeys;

static ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/acquire.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/release.lua")));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/renew.lua")));
static RAISE_FENCE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/raise_fence.lua")));

/// What one acquire script run found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Ours now, with this fencing token.
    Granted(u64),
    /// Held elsewhere; the key expires in this long (`None`: it has no expiry).
    Held(Option<Duration>),
}

/// A connection to one master. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub(crate) struct Node {
    inner: Arc<NodeInner>,
}

struct NodeInner {
    client: Client,
    connection: ConnectionManager,
    /// The URL with its password hidden, for messages.
    server: String,
    timeout: Duration,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("server", &self.inner.server)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// How to reach one master: its URL and the builder's connection settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target<'a> {
    pub(crate) url: &'a str,
    pub(crate) connect_timeout: Duration,
    pub(crate) timeout: Duration,
    /// A PEM root certificate to trust for `rediss://` instead of the platform's roots.
    pub(crate) root_certificate: Option<&'a [u8]>,
}

/// Parses `url` into a client without any I/O.
pub(crate) fn parse_client(url: &str, root_certificate: Option<&[u8]>) -> Result<Client> {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme);
    match scheme {
        Some("redis") => {}
        Some("rediss") => {
            // Several crates may turn on rustls providers; pick ring explicitly. An error only
            // means a provider is already installed.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        _ => {
            return Err(Error::invalid_input(format!(
                "{:?} is not a Redis URL: write redis://[USER:PASSWORD@]HOST:PORT[/DB] \
                 or rediss:// for TLS",
                redact(url)
            )));
        }
    }
    let invalid = |error: redis::RedisError| {
        Error::invalid_input(format!(
            "{:?} is not a valid Redis URL, or its TLS settings are invalid ({:?})",
            redact(url),
            error.kind()
        ))
    };
    match root_certificate {
        Some(root) if url.starts_with("rediss://") => {
            let certificates = redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(root.to_vec()),
            };
            Client::build_with_tls(url, certificates).map_err(invalid)
        }
        _ => Client::open(url).map_err(invalid),
    }
}

impl Node {
    /// Connects to `url` within `connect_timeout`; every later command times out after
    /// `timeout`.
    pub(crate) async fn connect(target: Target<'_>) -> Result<Self> {
        let Target {
            url,
            connect_timeout,
            timeout,
            root_certificate,
        } = target;
        let client = parse_client(url, root_certificate)?;
        let server = redact(url);
        let config = manager_config(connect_timeout);
        let connecting = ConnectionManager::new_with_config(client.clone(), config);
        let connection = match tokio::time::timeout(connect_timeout, connecting).await {
            Ok(connection) => connection.map_err(|error| from_redis(error, &server))?,
            Err(_) => return Err(timed_out(&server, connect_timeout)),
        };
        Ok(Self {
            inner: Arc::new(NodeInner {
                client,
                connection,
                server,
                timeout,
            }),
        })
    }

    /// Connects like [`connect`](Self::connect), but when the server cannot be reached returns a
    /// node that connects on first use, with the error. Invalid URLs still fail.
    pub(crate) async fn connect_or_lazy(target: Target<'_>) -> Result<(Self, Option<Error>)> {
        let Target {
            url,
            connect_timeout,
            timeout,
            root_certificate,
        } = target;
        let client = parse_client(url, root_certificate)?;
        match Self::connect(target).await {
            Ok(node) => Ok((node, None)),
            Err(error) if error.kind() == lock_core::ErrorKind::InvalidInput => Err(error),
            Err(error) => {
                let config = manager_config(connect_timeout);
                let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)
                    .map_err(|error| from_redis(error, &redact(url)))?;
                let node = Self {
                    inner: Arc::new(NodeInner {
                        client,
                        connection,
                        server: redact(url),
                        timeout,
                    }),
                };
                Ok((node, Some(error)))
            }
        }
    }

    /// The client, for opening the subscriber connection.
    pub(crate) fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The per-command timeout.
    pub(crate) fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// Runs one command future with the per-command timeout, or `limit` if longer.
    async fn run<T>(
        &self,
        limit: Duration,
        command: impl Future<Output = RedisResult<T>>,
    ) -> Result<T> {
        let limit = limit.max(self.inner.timeout);
        match tokio::time::timeout(limit, command).await {
            Ok(result) => result.map_err(|error| from_redis(error, &self.inner.server)),
            Err(_) => Err(timed_out(&self.inner.server, limit)),
        }
    }

    fn connection(&self) -> ConnectionManager {
        self.inner.connection.clone()
    }

    /// Runs the acquire script: `SET NX PX` unless an earlier waiter is queued, and on success
    /// the fence `INCR`. When not granted and `queue_ttl` is given, joins (or refreshes its
    /// place in) the waiter queue for that long.
    pub(crate) async fn acquire(
        &self,
        keys: &LockKeys,
        token: &str,
        lease: Duration,
        queue_ttl: Option<Duration>,
    ) -> Result<Attempt> {
        let mut connection = self.connection();
        let mut invocation = ACQUIRE.key(&keys.lock);
        invocation
            .key(&keys.fence)
            .key(&keys.queue)
            .key(&keys.queue_expiry)
            .arg(token)
            .arg(millis(lease))
            .arg(u8::from(queue_ttl.is_some()))
            .arg(queue_ttl.map_or(0, millis));
        let reply: (i64, i64) = self
            .run(Duration::ZERO, invocation.invoke_async(&mut connection))
            .await?;
        match reply {
            (1, fence) if fence > 0 => Ok(Attempt::Granted(fence as u64)),
            (0, wait) if wait >= 0 => Ok(Attempt::Held(Some(Duration::from_millis(wait as u64)))),
            (0, -1) => Ok(Attempt::Held(None)),
            // -2: no key, yet not granted; cannot happen within one script. Retry soon.
            (0, _) => Ok(Attempt::Held(Some(Duration::ZERO))),
            _ => Err(unexpected_reply(&self.inner.server, "the acquire script")),
        }
    }

    /// Runs the release script, which also takes `token` out of the waiter queue.
    /// `Some(receivers)` when the lock was ours and is deleted (with how many subscriber
    /// connections the wake-up reached), `None` when it was not ours.
    pub(crate) async fn release(&self, keys: &LockKeys, token: &str) -> Result<Option<u64>> {
        let mut connection = self.connection();
        let mut invocation = RELEASE.key(&keys.lock);
        invocation
            .key(&keys.channel)
            .key(&keys.queue)
            .key(&keys.queue_expiry)
            .arg(token);
        let (ours, receivers): (i64, i64) = self
            .run(Duration::ZERO, invocation.invoke_async(&mut connection))
            .await?;
        Ok((ours == 1).then(|| u64::try_from(receivers).unwrap_or(0)))
    }

    /// Runs the renew script: `true` when the lease was extended, `false` when not ours.
    pub(crate) async fn renew(
        &self,
        keys: &LockKeys,
        token: &str,
        lease: Duration,
    ) -> Result<bool> {
        let mut connection = self.connection();
        let mut invocation = RENEW.key(&keys.lock);
        invocation.arg(token).arg(millis(lease));
        let reply: i64 = self
            .run(Duration::ZERO, invocation.invoke_async(&mut connection))
            .await?;
        Ok(reply == 1)
    }

    /// Raises the fence counter to at least `fence` (Redlock keeps counters in step).
    pub(crate) async fn raise_fence(&self, keys: &LockKeys, fence: u64) -> Result<()> {
        let mut connection = self.connection();
        let mut invocation = RAISE_FENCE.key(&keys.fence);
        invocation.arg(fence);
        let _: i64 = self
            .run(Duration::ZERO, invocation.invoke_async(&mut connection))
            .await?;
        Ok(())
    }

    /// `WAIT replicas timeout`: how many replicas acknowledged this connection's writes.
    pub(crate) async fn wait_replicas(&self, replicas: usize, timeout: Duration) -> Result<u64> {
        let mut connection = self.connection();
        let mut command = redis::cmd("WAIT");
        command.arg(replicas).arg(millis(timeout));
        let limit = timeout + self.inner.timeout;
        let acknowledged: i64 = self
            .run(limit, command.query_async(&mut connection))
            .await?;
        Ok(u64::try_from(acknowledged).unwrap_or(0))
    }
}

/// Reconnects quickly and gives up fast. No response timeout of its own (its default is
/// 500 ms): every command is bounded by [`Node::run`] instead, which lets `WAIT` run longer.
fn manager_config(connect_timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(connect_timeout))
        .set_response_timeout(None)
        .set_number_of_retries(1)
        .set_min_delay(Duration::from_millis(20))
        .set_max_delay(Duration::from_secs(1))
}

/// A duration in whole milliseconds, at least 1.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}
