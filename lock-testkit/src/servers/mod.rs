//! Real servers from installed binaries, on reserved loopback ports in temp dirs.

mod cluster_health;
mod cluster_nodes;
mod cluster_setup;
mod dirs;
mod mariadb;
mod poll;
mod ports;
mod postgres;
mod process;
mod redis;
mod redis_cluster;
mod redis_sentinel;
mod resp;
mod resp_process;
mod sentinel;
mod slot_migration;
mod stopped;
mod zk_ensemble;
mod zookeeper;
mod zookeeper_tls;

pub(crate) use dirs::server_dir;
pub use mariadb::MariaDbServer;
pub use ports::PortReservation;
pub use postgres::PostgresServer;
pub use process::ServerProcess;

pub use process::find_binary;
pub use redis::RedisServer;
pub use redis_cluster::RedisCluster;
pub use redis_sentinel::RedisSentinel;
pub use sentinel::SentinelServer;
pub use zk_ensemble::ZkEnsemble;
pub use zookeeper::{ZkServer, four_letter};

/// An existing server's URL from `LOCK_TEST_<BACKEND>_URL` (`backend`: `REDIS`, `ZOOKEEPER`,
/// `POSTGRES`, `MYSQL`), used instead of spawning one.
pub fn external_url(backend: &str) -> Option<String> {
    std::env::var(format!("LOCK_TEST_{backend}_URL"))
        .ok()
        .filter(|url| !url.is_empty())
}
