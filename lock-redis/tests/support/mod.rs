//! Shared test helpers: one Redis server per test binary, direct commands.

#![allow(dead_code, unreachable_pub)]

pub mod commandstats;
pub mod target;

use std::sync::OnceLock;

use lock_testkit::require;
use lock_testkit::servers::{RedisServer, external_url};

static SERVER: OnceLock<Option<String>> = OnceLock::new();
static OWNED: OnceLock<Option<RedisServer>> = OnceLock::new();

/// The URL of the shared Redis for this test binary (`LOCK_TEST_REDIS_URL` or a spawned one);
/// `None` skips.
pub fn redis_url() -> Option<String> {
    SERVER
        .get_or_init(|| {
            external_url("REDIS").or_else(|| {
                OWNED
                    .get_or_init(|| lock_testkit::require(RedisServer::start()))
                    .as_ref()
                    .map(RedisServer::url)
            })
        })
        .clone()
}

/// The address of the server `url` names (its first resolved address), for a fault proxy.
pub fn socket_addr(url: &str) -> Option<std::net::SocketAddr> {
    use lock_redis::redis::{ConnectionAddr, IntoConnectionInfo};
    let info = url.into_connection_info().ok()?;
    let (host, port) = match info.addr() {
        ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
            (host.clone(), *port)
        }
        _ => return None,
    };
    std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
        .ok()?
        .next()
}

/// A plain connection for commands issued behind the lock's back: to the server `url` names,
/// or, for `redis+cluster://`, a cluster connection that routes each key to its node.
pub async fn raw(url: &str) -> Raw {
    use lock_redis::redis;
    if let Some(hosts) = url.strip_prefix("redis+cluster://") {
        let hosts = hosts.split(['/', '?']).next().unwrap_or_default();
        let nodes: Vec<String> = hosts
            .split(',')
            .map(|host| format!("redis://{host}"))
            .collect();
        let client = redis::cluster::ClusterClient::new(nodes).expect("valid cluster url");
        return Raw::Cluster(
            client
                .get_async_connection()
                .await
                .expect("raw cluster connection"),
        );
    }
    let client = redis::Client::open(url).expect("valid url");
    Raw::Server(
        client
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection"),
    )
}

/// A raw connection of either kind.
#[derive(Clone)]
pub enum Raw {
    Server(lock_redis::redis::aio::MultiplexedConnection),
    Cluster(lock_redis::redis::cluster_async::ClusterConnection),
}

impl lock_redis::redis::aio::ConnectionLike for Raw {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a lock_redis::redis::Cmd,
    ) -> lock_redis::redis::RedisFuture<'a, lock_redis::redis::Value> {
        match self {
            Self::Server(connection) => connection.req_packed_command(cmd),
            Self::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a lock_redis::redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> lock_redis::redis::RedisFuture<'a, Vec<lock_redis::redis::Value>> {
        match self {
            Self::Server(connection) => connection.req_packed_commands(pipeline, offset, count),
            Self::Cluster(connection) => connection.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        0
    }
}

/// The waiter queue keys of `name`: (queue, queue expiry).
pub fn raw_keys(lock: &lock_redis::RedisLock, name: &lock_core::LockName) -> (String, String) {
    let (key, _, _) = lock.keys_for(name);
    (format!("{key}:queue"), format!("{key}:queue:expiry"))
}

/// A master and a replica in sync, or `None` (a loud skip) when redis-server is missing.
pub fn master_and_replica() -> Option<(RedisServer, RedisServer)> {
    let master = require(RedisServer::start())?;
    let replica = require(RedisServer::start_replica_of(&master))?;
    Some((master, replica))
}
