//! What the SQL test binaries share: the conformance target and SQL-specific cases.
#![allow(dead_code)]

pub(crate) mod cases;

/// Expands to one named test per SQL-specific case in [`cases`], for the target that `$target`
/// (an `Option<SqlTarget>`; `None` skips) yields: each dialect's binary joins with one line.
macro_rules! sql_cases {
    ($target:expr) => {
        $crate::support::sql_cases!(@each $target;
            stale_holder_cannot_release_or_extend,
            small_pool_serves_more_holders_than_connections,
            wait_is_bounded_by_the_remaining_lease,
            fencing_survives_reconnects_and_severs,
            table_option_separates_locks,
        );
    };
    (@each $target:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let target: Option<$crate::support::SqlTarget> = $target;
                let Some(target) = target else { return };
                $crate::support::cases::$case(&target).await;
            }
        )*
    };
}
pub(crate) use sql_cases;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, LockName, Result};
use lock_sql::{Dialect, SqlLock};
use lock_testkit::ConformanceTarget;

/// A SQL database as the conformance suite drives it: every client is a separate `SqlLock`
/// with its own pool, as a separate process would have.
#[derive(Debug)]
pub(crate) struct SqlTarget {
    pub(crate) url: String,
    pub(crate) dialect: Dialect,
}

impl SqlTarget {
    pub(crate) fn shared(url: impl Into<String>) -> Arc<dyn ConformanceTarget> {
        Arc::new(Self::plain(url))
    }

    pub(crate) fn plain(url: impl Into<String>) -> Self {
        let url = url.into();
        let dialect = Dialect::from_url(&url).expect("SQL URL");
        Self { url, dialect }
    }

    /// A new client, with its own pool.
    pub(crate) async fn lock(&self) -> SqlLock {
        SqlLock::connect(&self.url).await.expect("connect")
    }

    /// The URL of the same kind of server at `addr`.
    fn url_at(&self, addr: SocketAddr) -> Option<String> {
        match self.dialect {
            Dialect::Postgres => Some(format!("postgres://postgres@{addr}/postgres")),
            Dialect::MySql => Some(format!("mysql://root@{addr}/distlock")),
            _ => None,
        }
    }
}

#[lock_core::async_trait]
impl ConformanceTarget for SqlTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(SqlLock::connect(&self.url).await?))
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        let admin = SqlLock::connect(&self.url).await?;
        admin.sever(name).await.map(drop)
    }

    async fn unreachable_client(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        let url = self.url_at(addr)?;
        let connected = SqlLock::builder(&url)
            .connect_timeout(timeout)
            .operation_timeout(timeout)
            .connect()
            .await;
        Some(connected.map(|lock| Arc::new(lock) as Arc<dyn DistributedLock>))
    }
}

/// A lock name no other test or run uses.
pub(crate) fn unique(case: &str) -> LockName {
    LockName::new(format!("sql-test/{case}/{:016x}", rand::random::<u64>())).expect("valid name")
}
