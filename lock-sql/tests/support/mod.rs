//! What the SQL test binaries share: the conformance target and SQL-specific cases.
#![allow(dead_code)]

pub(crate) mod accounts;
pub(crate) mod admin_cases;
pub(crate) mod cases;
pub(crate) mod claim_cases;
pub(crate) mod fifo_cases;
pub(crate) mod line;
pub(crate) mod renewal_cases;
pub(crate) mod tls;
pub(crate) mod turns;

/// Expands to one named test per SQL-specific case in [`cases`], [`admin_cases`],
/// [`fifo_cases`] and [`claim_cases`], for the target that `$target`
/// (an `Option<SqlTarget>`; `None` skips) yields: each dialect's binary joins with one line.
#[allow(unused_macros)] // the TLS binaries run the suite alone
macro_rules! sql_cases {
    ($target:expr) => {
        $crate::support::sql_cases!(@each $target, cases;
            stale_holder_cannot_release_or_extend,
            small_pool_serves_more_holders_than_connections,
            wait_is_bounded_by_the_remaining_lease,
            fencing_survives_reconnects_and_severs,
            table_option_separates_locks,
            tokens_rise_after_a_restore_from_an_older_snapshot,
        );
        $crate::support::sql_cases!(@each $target, admin_cases;
            tables_from_the_first_schema_gain_the_new_columns,
            waiter_entries_come_and_go_with_waiting,
            waiters_tables_without_places_in_line_gain_them,
            list_takes_the_prefix_literally,
        );
        $crate::support::sql_cases!(@each $target, fifo_cases;
            waiters_are_granted_in_arrival_order,
            a_newcomer_never_barges_ahead_of_a_waiter,
            a_line_that_stands_still_costs_few_reads,
            services_taking_turns_never_sit_out_a_backoff,
        );
        $crate::support::sql_cases!(@each $target, claim_cases;
            a_waiting_writer_notices_the_release_promptly,
        );
    };
    (@each $target:expr, $module:ident; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let target: Option<$crate::support::SqlTarget> = $target;
                let Some(target) = target else { return };
                $crate::support::$module::$case(&target).await;
            }
        )*
    };
}
#[allow(unused_imports)]
pub(crate) use sql_cases;

/// Expands to one named test per case of [`renewal_cases`], for the dialects that gather
/// renewals, on the server `$url` yields (an `Option<String>`; `None` skips).
#[allow(unused_macros)] // the SQLite and TLS binaries do not gather renewals
macro_rules! gathered_renewal_cases {
    ($url:expr) => {
        $crate::support::gathered_renewal_cases!(@each $url;
            holds_of_one_service_renew_in_one_statement_per_period,
            a_hold_lost_in_a_batch_is_told_apart,
        );
    };
    (@each $url:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let url: Option<String> = $url;
                let Some(url) = url else { return };
                $crate::support::renewal_cases::$case(&url).await;
            }
        )*
    };
}
#[allow(unused_imports)]
pub(crate) use gathered_renewal_cases;

use lock_core::ServiceBuilder;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, LockName, Result};
use lock_sql::{Dialect, SqlLock, sqlx};
use lock_testkit::ConformanceTarget;

/// A SQL database as the conformance suite drives it: every client is a separate `SqlLock`
/// with its own pool, as a separate process would have.
#[derive(Debug)]
pub(crate) struct SqlTarget {
    pub(crate) url: String,
    pub(crate) dialect: Dialect,
    admin: tokio::sync::OnceCell<Admin>,
}

impl SqlTarget {
    pub(crate) fn shared(url: impl Into<String>) -> Arc<dyn ConformanceTarget> {
        Arc::new(Self::plain(url))
    }

    pub(crate) fn plain(url: impl Into<String>) -> Self {
        let url = url.into();
        let dialect =
            Dialect::from_scheme(url.split(':').next().unwrap_or_default(), &url).expect("SQL URL");
        Self {
            url,
            dialect,
            admin: tokio::sync::OnceCell::new(),
        }
    }

    /// A new client, with its own pool.
    pub(crate) async fn lock(&self) -> SqlLock {
        SqlLock::builder(&self.url)
            .connect()
            .await
            .expect("connect")
    }

    /// The target's URL with its host and port replaced by `addr`: the same user, password,
    /// database and parameters, so a client through a proxy at `addr` logs in as the
    /// target's clients do. `None` for SQLite, which has no server.
    fn url_at(&self, addr: SocketAddr) -> Option<String> {
        if self.dialect == Dialect::Sqlite {
            return None;
        }
        let (scheme, rest) = self.url.split_once("://")?;
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let user = authority.rsplit_once('@').map(|(user, _)| user);
        let at = user.map(|user| format!("{user}@")).unwrap_or_default();
        Some(format!("{scheme}://{at}{addr}{tail}"))
    }

    /// The host and port the target's URL names (the driver's default port if none).
    fn server(&self) -> Option<SocketAddr> {
        let default_port = match self.dialect {
            Dialect::Postgres => 5432,
            Dialect::MySql => 3306,
            _ => return None,
        };
        let (_, rest) = self.url.split_once("://")?;
        let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
        let host_port = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        let with_port = if host_port.ends_with(']') || !host_port.contains(':') {
            format!("{host_port}:{default_port}")
        } else {
            host_port.to_owned()
        };
        std::net::ToSocketAddrs::to_socket_addrs(&with_port)
            .ok()?
            .next()
    }
}

#[lock_core::async_trait]
impl ConformanceTarget for SqlTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(SqlLock::builder(&self.url).connect().await?))
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        let admin = SqlLock::builder(&self.url).connect().await?;
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

    fn server_addr(&self) -> Option<SocketAddr> {
        self.server()
    }

    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }

    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(SqlLock::builder(url).connect().await?))
    }

    async fn lease_left(&self, name: &LockName) -> Option<Duration> {
        let micros = self.admin().await.lease_left_us(name.as_str()).await?;
        Some(Duration::from_micros(u64::try_from(micros).ok()?))
    }
}

/// A plain pool on the target's database, for reading the lock table behind the lock's back.
#[derive(Debug)]
pub(crate) enum Admin {
    Postgres(sqlx::PgPool),
    MySql(sqlx::MySqlPool),
    Sqlite(sqlx::SqlitePool),
}

impl Admin {
    /// Sets `name`'s fencing counter, as a restore from an older backup would.
    pub(crate) async fn set_fence(&self, name: &str, fence: u64) {
        let fence = i64::try_from(fence).expect("fence fits");
        const PG: &str = "UPDATE distlock_locks SET fence = $1 WHERE name = $2";
        const MY: &str = "UPDATE distlock_locks SET fence = ? WHERE name = ?";
        let updated = match self {
            Admin::Postgres(pool) => sqlx::query(PG)
                .bind(fence)
                .bind(name)
                .execute(pool)
                .await
                .map(|r| r.rows_affected()),
            Admin::MySql(pool) => sqlx::query(MY)
                .bind(fence)
                .bind(name.as_bytes())
                .execute(pool)
                .await
                .map(|r| r.rows_affected()),
            Admin::Sqlite(pool) => sqlx::query(MY)
                .bind(fence)
                .bind(name)
                .execute(pool)
                .await
                .map(|r| r.rows_affected()),
        };
        assert_eq!(updated.expect("set the fence"), 1, "no row for {name}");
    }

    /// The lease left on `name`'s live hold, in microseconds, by the database clock.
    pub(crate) async fn lease_left_us(&self, name: &str) -> Option<i64> {
        const PG: &str = "SELECT CAST(EXTRACT(EPOCH FROM lease_end - now()) * 1000000 AS BIGINT) \
                          FROM distlock_locks WHERE name = $1 AND owner IS NOT NULL";
        const MY: &str = "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_end) \
                          FROM distlock_locks WHERE name = ? AND owner IS NOT NULL";
        const LITE: &str = "SELECT (lease_end - CAST((julianday('now') - 2440587.5) * 86400000.0 \
                            AS INTEGER)) * 1000 FROM distlock_locks WHERE name = ?1 AND owner IS NOT NULL";
        match self {
            Admin::Postgres(pool) => sqlx::query_scalar(PG).bind(name).fetch_optional(pool).await,
            Admin::MySql(pool) => {
                sqlx::query_scalar(MY)
                    .bind(name.as_bytes())
                    .fetch_optional(pool)
                    .await
            }
            Admin::Sqlite(pool) => {
                sqlx::query_scalar(LITE)
                    .bind(name)
                    .fetch_optional(pool)
                    .await
            }
        }
        .ok()
        .flatten()
    }
}

impl SqlTarget {
    /// The admin pool, opened on first use.
    pub(crate) async fn admin(&self) -> &Admin {
        self.admin
            .get_or_init(|| async {
                let url = self.url.as_str();
                match self.dialect {
                    Dialect::Postgres => {
                        Admin::Postgres(sqlx::PgPool::connect(url).await.expect("admin pool"))
                    }
                    Dialect::MySql => {
                        Admin::MySql(sqlx::MySqlPool::connect(url).await.expect("admin pool"))
                    }
                    _ => {
                        // The file may not exist yet when this case runs first.
                        let options = url.parse::<sqlx::sqlite::SqliteConnectOptions>();
                        let options = options.expect("SQLite URL").create_if_missing(true);
                        let pool = sqlx::SqlitePool::connect_with(options).await;
                        Admin::Sqlite(pool.expect("admin pool"))
                    }
                }
            })
            .await
    }
}

/// A lock name no other test or run uses.
pub(crate) fn unique(case: &str) -> LockName {
    LockName::new(format!("sql-test/{case}/{:016x}", rand::random::<u64>())).expect("valid name")
}
