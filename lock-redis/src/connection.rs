//! A connection to wherever a lock's keys live: one server (standalone, or the master the
//! Sentinels name), or a Redis Cluster, which routes each command to the node owning its keys'
//! slot and follows `MOVED` and `ASK` while slots migrate.

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{
    MultipleNodeRoutingInfo, Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr,
};
use redis::{Cmd, FromRedisValue, Pipeline, RedisFuture, RedisResult, Value};

/// A multiplexed connection of either kind: cheap to clone, clones share it.
#[derive(Clone)]
pub(crate) enum Connection {
    /// One server.
    Server(MultiplexedConnection),
    /// Every node of a cluster, one multiplexed connection each.
    Cluster(ClusterConnection),
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Server(_) => "Connection::Server",
            Self::Cluster(_) => "Connection::Cluster",
        })
    }
}

impl Connection {
    /// `WAIT count timeout_ms` on the node that ran this connection's last write to `key`:
    /// a cluster routes it to the master of `key`'s slot, where the write went (`WAIT` counts
    /// the replicas of that shard only).
    pub(crate) async fn wait_replicas(
        &mut self,
        count: usize,
        timeout_ms: u64,
        key: &str,
    ) -> RedisResult<i64> {
        let mut wait = redis::cmd("WAIT");
        wait.arg(count).arg(timeout_ms);
        match self {
            Self::Server(connection) => wait.query_async(connection).await,
            Self::Cluster(connection) => {
                let route = Route::with_key(key.as_bytes(), SlotAddr::Master);
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
                let reply = connection.route_command(wait, routing).await?;
                Ok(redis::from_redis_value(reply)?)
            }
        }
    }

    /// Runs `command` on the server, or on every master of a cluster: one text reply per
    /// master (for `INFO`, which each node answers for itself).
    pub(crate) async fn on_every_master(&mut self, command: Cmd) -> RedisResult<Vec<String>> {
        match self {
            Self::Server(connection) => Ok(vec![command.query_async(connection).await?]),
            Self::Cluster(connection) => {
                let routing = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
                let reply = connection.route_command(command, routing).await?;
                let mut texts = Vec::new();
                collect_texts(reply, &mut texts);
                Ok(texts)
            }
        }
    }
}

/// Where one walk of the keyspace (`SCAN`) goes: the server, or one master of a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shard {
    /// The one server.
    Server,
    /// A cluster master at this address.
    Node { host: String, port: u16 },
}

impl Connection {
    /// The shards a keyspace walk visits: the server, or every master that owns slots.
    pub(crate) async fn shards(&mut self) -> RedisResult<Vec<Shard>> {
        match self {
            Self::Server(_) => Ok(vec![Shard::Server]),
            Self::Cluster(connection) => {
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random);
                let reply = connection
                    .route_command(redis::cmd("CLUSTER").arg("NODES").clone(), routing)
                    .await?;
                let nodes: String = redis::from_redis_value(reply)?;
                Ok(masters_with_slots(&nodes))
            }
        }
    }

    /// Runs `command` on `shard`.
    pub(crate) async fn query_on<T: FromRedisValue>(
        &mut self,
        command: Cmd,
        shard: &Shard,
    ) -> RedisResult<T> {
        match (self, shard) {
            (Self::Cluster(connection), Shard::Node { host, port }) => {
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                    host: host.clone(),
                    port: *port,
                });
                let reply = connection.route_command(command, routing).await?;
                Ok(redis::from_redis_value(reply)?)
            }
            (connection, _) => command.query_async(connection).await,
        }
    }
}

/// The masters that own slots, from `CLUSTER NODES` (`ID HOST:PORT@BUS[,NAME] FLAGS MASTER
/// PING PONG EPOCH LINK SLOT...`); failed masters are left out.
fn masters_with_slots(nodes: &str) -> Vec<Shard> {
    nodes
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let flags = fields.get(2)?;
            let is_master = flags.split(',').any(|flag| flag == "master");
            let failed = flags
                .split(',')
                .any(|flag| flag == "fail" || flag == "noaddr");
            if !is_master || failed || fields.len() < 9 {
                return None;
            }
            let address = fields.get(1)?.split(['@', ',']).next()?;
            let (host, port) = address.rsplit_once(':')?;
            Some(Shard::Node {
                host: host.to_owned(),
                port: port.parse().ok()?,
            })
        })
        .collect()
}

/// Every text in a reply, however nested (a cluster answers a multi-node command with a map of
/// node address to that node's reply).
fn collect_texts(value: Value, into: &mut Vec<String>) {
    match value {
        Value::BulkString(bytes) => into.push(String::from_utf8_lossy(&bytes).into_owned()),
        Value::SimpleString(text) | Value::VerbatimString { text, .. } => into.push(text),
        Value::Array(values) | Value::Set(values) => {
            for value in values {
                collect_texts(value, into);
            }
        }
        Value::Map(pairs) => {
            for (_node, value) in pairs {
                collect_texts(value, into);
            }
        }
        _ => {}
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Server(connection) => connection.req_packed_command(cmd),
            Self::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Server(connection) => connection.req_packed_commands(pipeline, offset, count),
            Self::Cluster(connection) => connection.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Server(connection) => connection.get_db(),
            Self::Cluster(connection) => connection.get_db(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masters_that_own_slots_are_the_shards() {
        let nodes = "\
a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460
b2 127.0.0.1:7002@17002,host-b master - 0 0 2 connected 5461-10922 [5462->-c3]
c3 127.0.0.1:7003@17003 master,fail - 0 0 3 disconnected 10923-16383
d4 127.0.0.1:7004@17004 slave a1 0 0 1 connected
e5 127.0.0.1:7005@17005 master - 0 0 5 connected
";
        let node = |port| Shard::Node {
            host: "127.0.0.1".to_owned(),
            port,
        };
        assert_eq!(masters_with_slots(nodes), [node(7001), node(7002)]);
    }

    #[test]
    fn a_cluster_reply_yields_each_node_text() {
        let reply = Value::Map(vec![
            (
                Value::SimpleString("127.0.0.1:1".into()),
                Value::BulkString(b"maxmemory_policy:noeviction".to_vec()),
            ),
            (
                Value::SimpleString("127.0.0.1:2".into()),
                Value::VerbatimString {
                    format: redis::VerbatimFormat::Text,
                    text: "maxmemory_policy:allkeys-lru".into(),
                },
            ),
        ]);
        let mut texts = Vec::new();
        collect_texts(reply, &mut texts);
        assert_eq!(
            texts,
            [
                "maxmemory_policy:noeviction",
                "maxmemory_policy:allkeys-lru"
            ]
        );
    }
}
