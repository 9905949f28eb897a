//! `connect(url)`: choose a backend at run time from a URL. The one table of schemes.

use std::sync::Arc;

use lock_core::url::redact;
use lock_core::{DistributedLock, Error, Result};

/// One URL scheme `connect` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Scheme {
    /// The scheme, as written before `:`.
    pub name: &'static str,
    /// The Cargo feature that enables it (`None`: always on).
    pub feature: Option<&'static str>,
    /// What the scheme connects to.
    pub description: &'static str,
}

const fn scheme(
    name: &'static str,
    feature: Option<&'static str>,
    description: &'static str,
) -> Scheme {
    Scheme {
        name,
        feature,
        description,
    }
}

/// Every URL scheme `connect` knows.
pub const SCHEMES: &[Scheme] = &[
    scheme(
        "memory",
        None,
        "in-process locks shared by every memory://NAME of one process",
    ),
    scheme("zk", Some("zookeeper"), "a ZooKeeper ensemble"),
    scheme("zk+tls", Some("zookeeper"), "a ZooKeeper ensemble over TLS"),
    scheme(
        "redis",
        Some("redis"),
        "one Redis master, or Redlock over several hosts",
    ),
    scheme("rediss", Some("redis"), "Redis over TLS"),
    scheme(
        "redis+cluster",
        Some("redis"),
        "a Redis Cluster, by its seed nodes",
    ),
    scheme("rediss+cluster", Some("redis"), "a Redis Cluster over TLS"),
    scheme(
        "redis+sentinel",
        Some("redis"),
        "the Redis master a set of Sentinels names",
    ),
    scheme(
        "rediss+sentinel",
        Some("redis"),
        "a Sentinel-managed Redis over TLS",
    ),
    scheme("postgres", Some("postgres"), "PostgreSQL"),
    scheme("postgresql", Some("postgres"), "PostgreSQL"),
    scheme("mysql", Some("mysql"), "MySQL or MariaDB"),
    scheme("mariadb", Some("mysql"), "MariaDB (spoken as MySQL)"),
    scheme(
        "sqlite",
        Some("sqlite"),
        "an SQLite file shared by local processes",
    ),
];

/// Connects to the lock service a URL names and returns it as `Arc<dyn DistributedLock>`.
///
/// | URL | backend |
/// |---|---|
/// | `memory://NAME` | in-process [`MemoryLock`](lock_core::MemoryLock), shared by every `connect` with the same `NAME` in this process |
/// | `zk://[user:password@]host:port[,host:port...][/chroot]` | ZooKeeper (`zookeeper` feature), see `lock_zk` |
/// | `zk+tls://...?tls_ca=FILE[&tls_cert=FILE&tls_key=FILE]` | ZooKeeper over TLS (`zookeeper` feature) |
/// | `redis://[user:password@]host:port[/db]`, `rediss://...` | Redis (`redis` feature); several hosts form a Redlock, see `lock_redis` |
/// | `redis+cluster://[user:password@]host:port[,host:port...]`, `rediss+cluster://...` | a Redis Cluster by its seed nodes (`redis` feature) |
/// | `redis+sentinel://host:port[,host:port...]/MASTER[/db]`, `rediss+sentinel://...` | the master a set of Redis Sentinels names (`redis` feature) |
/// | `postgres://user@host:port/db` | PostgreSQL (`postgres` feature), see `lock_sql` |
/// | `mysql://user@host:port/db`, `mariadb://...` | MySQL or MariaDB (`mysql` feature), see `lock_sql` |
/// | `sqlite://PATH`, `sqlite::memory:` | SQLite file shared by local processes (`sqlite` feature), see `lock_sql` |
///
/// Every scheme takes `connect_timeout`, `operation_timeout`, `lease`, `wait`, `clock_drift`
/// and `at_risk` parameters (durations as `250ms`, `5s`, `2m`), plus its backend's own; an
/// unknown parameter is refused with the list of known ones. Schemes of backends whose Cargo
/// feature is off fail with a message naming the feature.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> distlock::Result<()> {
/// use distlock::{DistributedLockExt, ErrorKind};
///
/// // In production the URL comes from configuration: zk://..., redis://..., postgres://...
/// let locks = distlock::connect("memory://example?lease=10s").await?;
/// let guard = locks.acquire("jobs/nightly").await?;
/// guard.release().await?;
///
/// let error = distlock::connect("nonsense://x").await.expect_err("unknown scheme");
/// assert_eq!(error.kind(), ErrorKind::InvalidInput);
/// # Ok(())
/// # }
/// ```
///
/// # Cancel safety
///
/// Cancel safe: dropping the future closes any connection being opened.
///
/// # Errors
///
/// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a malformed URL, an
/// unknown scheme or parameter, or a scheme whose feature is off (before any I/O);
/// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when the server cannot be
/// reached within the connect timeout.
pub async fn connect(url: &str) -> Result<Arc<dyn DistributedLock>> {
    let scheme = url
        .split_once(':')
        .map(|(scheme, _)| scheme.to_ascii_lowercase())
        .unwrap_or_default();
    match scheme.as_str() {
        "memory" => Ok(Arc::new(lock_core::MemoryLock::from_url(url)?)),
        #[cfg(feature = "zookeeper")]
        "zk" | "zk+tls" => Ok(Arc::new(lock_zk::ZkLock::builder(url).connect().await?)),
        #[cfg(feature = "redis")]
        "redis" | "rediss" => connect_redis(url).await,
        #[cfg(feature = "redis")]
        "redis+cluster" | "rediss+cluster" | "redis+sentinel" | "rediss+sentinel" => Ok(Arc::new(
            lock_redis::RedisLock::builder(url).connect().await?,
        )),
        #[cfg(feature = "postgres")]
        "postgres" | "postgresql" => Ok(Arc::new(lock_sql::SqlLock::builder(url).connect().await?)),
        #[cfg(feature = "mysql")]
        "mysql" | "mariadb" => Ok(Arc::new(lock_sql::SqlLock::builder(url).connect().await?)),
        #[cfg(feature = "sqlite")]
        "sqlite" => Ok(Arc::new(lock_sql::SqlLock::builder(url).connect().await?)),
        _ => Err(unavailable_scheme(url, &scheme)),
    }
}

/// One host: a [`RedisLock`](lock_redis::RedisLock); several: a [`Redlock`](lock_redis::Redlock).
#[cfg(feature = "redis")]
async fn connect_redis(url: &str) -> Result<Arc<dyn DistributedLock>> {
    let query_start = url.find('?').unwrap_or(url.len());
    if url[..query_start].contains(',') {
        Ok(Arc::new(lock_redis::Redlock::builder(url).connect().await?))
    } else {
        Ok(Arc::new(
            lock_redis::RedisLock::builder(url).connect().await?,
        ))
    }
}

/// The error for a scheme that is unknown or whose feature is off.
fn unavailable_scheme(url: &str, scheme: &str) -> Error {
    match SCHEMES.iter().find(|known| known.name == scheme) {
        Some(Scheme {
            feature: Some(feature),
            ..
        }) => Error::invalid_input(format!(
            "invalid {scheme} URL {:?}: it needs distlock's `{feature}` feature, which this \
             build does not have: enable it in Cargo.toml (features = [\"{feature}\"] or [\"full\"])",
            redact(url)
        )),
        _ => {
            let known: Vec<&str> = SCHEMES.iter().map(|known| known.name).collect();
            Error::invalid_input(format!(
                "invalid URL {:?}: unknown scheme {scheme:?}; expected one of {}",
                redact(url),
                known.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::{DistributedLockExt, ErrorKind};

    #[tokio::test]
    async fn unknown_scheme_is_invalid_input_listing_the_known_ones() {
        let error = connect("nonsense://x")
            .await
            .expect_err("nonsense accepted");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        let message = error.to_string();
        assert!(
            message.contains("unknown scheme \"nonsense\"") && message.contains("redis"),
            "{message}"
        );
        let error = connect("no scheme here").await.expect_err("accepted");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
    }

    #[tokio::test]
    async fn memory_urls_with_one_name_share_locks() {
        let (a, b) = (
            connect("memory://shared").await,
            connect("memory://shared?lease=5s").await,
        );
        let (a, b) = (a.expect("connect a"), b.expect("connect b"));
        let held = a
            .try_acquire("job")
            .await
            .expect("try a")
            .expect("free lock");
        assert!(
            b.try_acquire("job").await.expect("try b").is_none(),
            "memory://shared is not shared"
        );
        held.release().await.expect("release");
        let error = connect("memory://x?bogus=1")
            .await
            .expect_err("bogus accepted");
        assert!(error.to_string().contains("unknown parameter"), "{error}");
    }
}
