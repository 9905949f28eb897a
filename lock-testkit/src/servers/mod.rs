//! Real servers from installed binaries, on free loopback ports in temp dirs.

mod mariadb;
mod postgres;
mod process;
mod redis;
mod zookeeper;

pub use mariadb::MariaDbServer;
pub use postgres::PostgresServer;
pub use process::{ServerProcess, free_port};

pub(crate) use process::find_binary;
pub use redis::RedisServer;
pub use zookeeper::{ZkEnsemble, ZkServer, four_letter};

/// An existing server's URL from `LOCK_TEST_<BACKEND>_URL` (`backend`: `REDIS`, `ZOOKEEPER`,
/// `POSTGRES`, `MYSQL`), used instead of spawning one.
pub fn external_url(backend: &str) -> Option<String> {
    std::env::var(format!("LOCK_TEST_{backend}_URL"))
        .ok()
        .filter(|url| !url.is_empty())
}
