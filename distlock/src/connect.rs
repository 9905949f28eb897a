//! `connect(url)`: choose a backend at run time from a URL.

use std::sync::Arc;

use lock_core::{DistributedLock, Error, Result};

use crate::memory_registry::shared_memory_lock;

/// Every URL scheme `connect` knows, with the Cargo feature that enables it (`None`: always on).
pub const SCHEMES: &[(&str, Option<&str>)] = &[
    ("memory", None),
    ("zk", Some("zookeeper")),
    ("redis", Some("redis")),
    ("rediss", Some("redis")),
    ("postgres", Some("postgres")),
    ("postgresql", Some("postgres")),
    ("mysql", Some("mysql")),
    ("mariadb", Some("mysql")),
    ("sqlite", Some("sqlite")),
];

/// Connects to the lock service a URL names and returns it as `Arc<dyn DistributedLock>`.
///
/// | URL | backend |
/// |---|---|
/// | `memory://NAME` | in-process [`MemoryLock`](lock_core::MemoryLock), shared by every `connect` with the same `NAME` in this process |
/// | `zk://host:port[,host:port...][/chroot]` | ZooKeeper (`zookeeper` feature), see `lock_zk` |
/// | `redis://[user:password@]host:port[/db]`, `rediss://...` | Redis (`redis` feature); several comma-separated URLs form a Redlock, see `lock_redis` |
/// | `postgres://user@host:port/db` | PostgreSQL (`postgres` feature), see `lock_sql` |
/// | `mysql://user@host:port/db`, `mariadb://...` | MySQL or MariaDB (`mysql` feature), see `lock_sql` |
/// | `sqlite://PATH`, `sqlite::memory:` | SQLite file shared by local processes (`sqlite` feature), see `lock_sql` |
///
/// Schemes of backends whose Cargo feature is off fail with a message naming the feature.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> distlock::Result<()> {
/// use distlock::{DistributedLockExt, ErrorKind};
///
/// // In production the URL comes from configuration: zk://..., redis://..., postgres://...
/// let locks = distlock::connect("memory://example").await?;
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
/// unknown scheme, or a scheme whose feature is off (before any I/O);
/// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when the server cannot be
/// reached within the backend's connect timeout.
pub async fn connect(url: &str) -> Result<Arc<dyn DistributedLock>> {
    let Some((scheme, rest)) = url.split_once(':') else {
        return Err(Error::invalid_input(format!(
            "{url:?} is not a lock service URL: expected SCHEME://..., for example memory://tests or redis://127.0.0.1:6379"
        )));
    };
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "memory" => {
            let name = rest
                .strip_prefix("//")
                .ok_or_else(|| Error::invalid_input(format!("{url:?}: write memory://NAME")))?;
            Ok(Arc::new(shared_memory_lock(name)))
        }
        #[cfg(feature = "zookeeper")]
        "zk" => lock_zk::connect(url).await,
        #[cfg(feature = "redis")]
        "redis" | "rediss" => lock_redis::connect(url).await,
        #[cfg(feature = "postgres")]
        "postgres" | "postgresql" => lock_sql::connect(url).await,
        #[cfg(feature = "mysql")]
        "mysql" | "mariadb" => lock_sql::connect(url).await,
        #[cfg(feature = "sqlite")]
        "sqlite" => lock_sql::connect(url).await,
        _ => Err(unavailable_scheme(url, &scheme)),
    }
}

/// The error for a scheme that is unknown or whose feature is off.
fn unavailable_scheme(url: &str, scheme: &str) -> Error {
    match SCHEMES.iter().find(|(known, _)| *known == scheme) {
        Some((_, Some(feature))) => Error::invalid_input(format!(
            "{scheme}:// URLs need distlock's `{feature}` feature, which this build does not have: \
             enable it in Cargo.toml (features = [\"{feature}\"] or [\"full\"])"
        )),
        _ => {
            let known: Vec<&str> = SCHEMES.iter().map(|(scheme, _)| *scheme).collect();
            Error::invalid_input(format!(
                "{url:?}: unknown scheme {scheme:?}; expected one of {}",
                known.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::ErrorKind;

    #[tokio::test]
    async fn unknown_scheme_is_invalid_input_listing_the_known_ones() {
        let error = connect("nonsense://x")
            .await
            .expect_err("nonsense accepted");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            error.to_string().contains("unknown scheme \"nonsense\"")
                && error.to_string().contains("redis"),
            "{error}"
        );
        let error = connect("no scheme here").await.expect_err("accepted");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
    }

    #[tokio::test]
    async fn memory_urls_with_one_name_share_locks() {
        use lock_core::DistributedLockExt;
        let (a, b) = (
            connect("memory://shared").await,
            connect("memory://shared").await,
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
    }
}
