//! The servers a run measures: spawned with lock-testkit, or taken from `LOCK_TEST_<BACKEND>_URL`.

use lock_testkit::servers::{
    MariaDbServer, PostgresServer, RedisCluster, RedisServer, ServerProcess, ZkServer, external_url,
};

use crate::BenchResult;

/// One server: either spawned here (and killed when dropped) or external.
#[derive(Debug)]
enum Running<T> {
    Spawned(T),
    External,
}

impl<T> Running<T> {
    /// The process id of a spawned server.
    fn pid(&mut self, process: fn(&mut T) -> &mut ServerProcess) -> Option<u32> {
        match self {
            Running::Spawned(server) => process(server).pid(),
            Running::External => None,
        }
    }
}

/// Every server of the run and its URL.
#[derive(Debug)]
pub struct Servers {
    _redis: Running<RedisServer>,
    _zookeeper: Running<ZkServer>,
    _postgres: Running<PostgresServer>,
    _mysql: Running<MariaDbServer>,
    _sqlite_dir: tempfile::TempDir,
    _redis_cluster: Option<Running<RedisCluster>>,
    /// `redis://host:port`.
    pub redis: String,
    /// `zk://host:port`.
    pub zookeeper: String,
    /// `postgres://...`.
    pub postgres: String,
    /// `mysql://.../distlock`.
    pub mysql: String,
    /// `sqlite://PATH` of a database file in a temp dir.
    pub sqlite: String,
    /// `redis+cluster://host:port,...` once [`Servers::start_redis_cluster`] has run.
    pub redis_cluster: Option<String>,
    /// The process id of each spawned server, by backend.
    pids: Vec<(&'static str, u32)>,
}

/// The Redis Cluster's shape: 3 primaries (Redis Cluster's minimum), each with one replica, as
/// a small production cluster is laid out.
pub const CLUSTER_PRIMARIES: usize = 3;

/// Replicas per primary of the Redis Cluster.
pub const CLUSTER_REPLICAS: usize = 1;

fn start<T>(
    backend: &str,
    spawn: impl FnOnce() -> Result<T, lock_testkit::ServerError>,
    url: impl FnOnce(&T) -> String,
) -> BenchResult<(Running<T>, String)> {
    if let Some(url) = external_url(backend) {
        return Ok((Running::External, url));
    }
    let server = spawn()?;
    let url = url(&server);
    Ok((Running::Spawned(server), url))
}

impl Servers {
    /// Starts (or finds) Redis, ZooKeeper, PostgreSQL and MariaDB, and makes a SQLite file.
    ///
    /// # Errors
    ///
    /// A server that is missing or does not start.
    pub fn start() -> BenchResult<Self> {
        let (mut redis_server, redis) = start("REDIS", RedisServer::start, RedisServer::url)?;
        let (mut zk_server, zookeeper) = start("ZOOKEEPER", ZkServer::start, ZkServer::url)?;
        let (mut pg_server, postgres) = start(
            "POSTGRES",
            || PostgresServer::start_with_settings(&crate::counters::PG_COUNTING_SETTINGS),
            PostgresServer::url,
        )?;
        let (mut my_server, mysql) = start("MYSQL", MariaDbServer::start, MariaDbServer::url)?;
        let pids = [
            ("redis", redis_server.pid(RedisServer::process)),
            ("zookeeper", zk_server.pid(ZkServer::process)),
            ("postgres", pg_server.pid(PostgresServer::process)),
            ("mysql", my_server.pid(MariaDbServer::process)),
        ];
        let dir = tempfile::tempdir()?;
        let sqlite = format!("sqlite://{}", dir.path().join("locks.db").display());
        Ok(Self {
            _redis: redis_server,
            _zookeeper: zk_server,
            _postgres: pg_server,
            _mysql: my_server,
            _sqlite_dir: dir,
            _redis_cluster: None,
            redis,
            zookeeper,
            postgres,
            mysql,
            sqlite,
            redis_cluster: None,
            pids: pids
                .into_iter()
                .filter_map(|(backend, pid)| Some((backend, pid?)))
                .collect(),
        })
    }

    /// The process id of `backend`'s server when this run spawned it (`redis`, `zookeeper`,
    /// `postgres`, `mysql`): `None` for an external server, the Redis Cluster's several
    /// nodes, and the in-process backends.
    pub fn server_pid(&self, backend: &str) -> Option<u32> {
        self.pids
            .iter()
            .find_map(|(name, pid)| (*name == backend).then_some(*pid))
    }

    /// Starts (or finds, from `LOCK_TEST_REDIS_CLUSTER_URL`) a Redis Cluster of
    /// [`CLUSTER_PRIMARIES`] primaries with [`CLUSTER_REPLICAS`] replica each. Apart from
    /// [`Servers::start`] because only the latency and contention scenarios use it: a run
    /// without them starts no extra nodes.
    ///
    /// # Errors
    ///
    /// `redis-server` or `redis-cli` is missing, or the cluster does not settle.
    pub fn start_redis_cluster(&mut self) -> BenchResult<()> {
        let (cluster, url) = start(
            "REDIS_CLUSTER",
            || RedisCluster::start(CLUSTER_PRIMARIES, CLUSTER_REPLICAS),
            RedisCluster::url,
        )?;
        self._redis_cluster = Some(cluster);
        self.redis_cluster = Some(url);
        Ok(())
    }

    /// The URL of `backend` (`redis`, `redis-cluster`, `zookeeper`, `postgres`, `mysql`,
    /// `sqlite`, `memory`). `redis-cluster` is empty until the cluster is started, which
    /// connecting refuses as an invalid URL.
    pub fn url(&self, backend: &str) -> String {
        match backend {
            "redis" => self.redis.clone(),
            "redis-cluster" => self.redis_cluster.clone().unwrap_or_default(),
            "zookeeper" => self.zookeeper.clone(),
            "postgres" => self.postgres.clone(),
            "mysql" => self.mysql.clone(),
            "sqlite" => self.sqlite.clone(),
            _ => "memory://compare-bench".to_owned(),
        }
    }
}

/// `host:port` of a URL like `scheme://[user@]host:port[/path][?query]`.
pub fn host_port(url: &str) -> Option<(String, u16)> {
    let rest = url.split_once("://")?.1;
    let rest = rest.split(['/', '?']).next()?;
    let rest = rest.rsplit_once('@').map_or(rest, |(_, hosts)| hosts);
    let first = rest.split(',').next()?;
    let (host, port) = first.rsplit_once(':')?;
    Some((host.to_owned(), port.parse().ok()?))
}
