//! The lock service: acquire loop, waiting, and the `DistributedLock` implementation.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{
    AcquireOptions, Backoff, Capabilities, DistributedLock, Error, IntoLockName, LockGuard,
    LockName, Result,
};
use tokio::sync::OnceCell;
use tokio::time::Instant;

use crate::config::{Config, SqlLockBuilder, redact};
use crate::db::{Attempt, Conn, Db, Owner};
use crate::error::SqlError;
use crate::held::{PendingAttempt, SqlHeld};
use crate::wakeups::Wakeups;
use crate::{Dialect, TableName};

/// The longest a PostgreSQL waiter sleeps between attempts while notifications flow: a
/// safety net for a notification lost in a reconnect.
const NOTIFIED_FALLBACK: Duration = Duration::from_secs(5);

/// A lock service on one SQL database: one pool, one lock table, any number of lock names.
///
/// Cheap to clone (clones share the pool). Build with [`SqlLock::connect`] or
/// [`SqlLock::builder`].
#[derive(Clone)]
pub struct SqlLock {
    inner: Arc<Inner>,
}

/// State shared by the service and its holds.
pub(crate) struct Inner {
    config: Config,
    pub(crate) db: Db,
    wakeups: Wakeups,
    schema: OnceCell<()>,
}

impl Inner {
    pub(crate) fn error(&self, error: SqlError, operation: &'static str) -> Error {
        error.into_error(self.config.dialect.backend(), operation)
    }

    async fn ensure_schema(&self) -> Result<()> {
        self.schema
            .get_or_try_init(|| async { self.db.ensure_schema().await })
            .await
            .map_err(|error| self.error(error, "ensure_schema"))?;
        Ok(())
    }

    /// Releases `name` if `owner` holds it (on `conn` if given), waking this service's waiters.
    pub(crate) async fn release(
        &self,
        conn: Option<Conn>,
        name: &LockName,
        owner: Owner,
    ) -> Result<bool> {
        let released = self
            .db
            .release(conn, name.as_str(), owner)
            .await
            .map_err(|error| self.error(error, "release").with_lock(name))?;
        if released {
            self.wakeups.released(name.as_str());
        }
        Ok(released)
    }
}

impl SqlLock {
    /// Settings for a lock service on the database `url` names (see [`SqlLockBuilder`]).
    pub fn builder(url: &str) -> SqlLockBuilder {
        SqlLockBuilder::new(url)
    }

    /// Connects with default settings (and any `lock_*` URL parameters), creating the lock
    /// table if it is missing.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes any connection being opened.
    ///
    /// # Errors
    ///
    /// As [`SqlLockBuilder::connect`].
    pub async fn connect(url: &str) -> Result<Self> {
        Self::builder(url).connect().await
    }

    /// Creates the lock table if it does not exist. Acquiring does this on first use; call it
    /// to surface permission problems early.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: `CREATE TABLE IF NOT EXISTS` either ran or did not; calling again is
    /// harmless.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when the database cannot
    /// be reached in time, [`ErrorKind::Backend`](lock_core::ErrorKind::Backend) when it refuses
    /// (for example, no permission to create tables).
    pub async fn ensure_schema(&self) -> Result<()> {
        self.inner.ensure_schema().await
    }

    /// Ends the current hold on `name` behind its holder's back, as an operator clearing the
    /// row's owner would; the fencing counter stays. The holder learns at its next renewal
    /// (its lost signal fires). Returns whether there was a hold.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the single `UPDATE` either ran or did not.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for an invalid name;
    /// otherwise as [`ensure_schema`](SqlLock::ensure_schema).
    pub async fn sever(&self, name: impl IntoLockName) -> Result<bool> {
        let name = name.into_lock_name()?;
        self.inner.ensure_schema().await?;
        let inner = &self.inner;
        inner
            .db
            .sever(name.as_str())
            .await
            .map_err(|error| inner.error(error, "sever").with_lock(&name))
    }

    /// The database dialect.
    pub fn dialect(&self) -> Dialect {
        self.inner.config.dialect
    }

    /// The lock table.
    pub fn table(&self) -> &TableName {
        &self.inner.config.table
    }

    /// How long to pause after a failed attempt before the next one.
    fn pause(&self, attempt: u32, outcome: Attempt, backoff: &Backoff) -> Duration {
        let remaining = match outcome {
            Attempt::Held(remaining) => remaining,
            Attempt::Granted(_) | Attempt::Contended => return backoff.delay(attempt),
        };
        // Retry just after the holder's lease ends, at the latest.
        let lease_end = remaining.map(|left| left + Duration::from_millis(1));
        if self.inner.wakeups.server_side() {
            lease_end.map_or(NOTIFIED_FALLBACK, |end| end.min(NOTIFIED_FALLBACK))
        } else {
            let delay = backoff.delay(attempt);
            lease_end.map_or(delay, |end| end.min(delay))
        }
    }
}

impl SqlLockBuilder {
    /// Builds the service and creates the lock table if it is missing, which also checks that
    /// the database answers.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future closes any connection being opened.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a malformed URL,
    /// unknown scheme, disabled dialect or bad setting (before any I/O);
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when no connection can be
    /// made within the connect timeout; [`ErrorKind::Backend`](lock_core::ErrorKind::Backend)
    /// when the database refuses to create the table.
    pub async fn connect(self) -> Result<SqlLock> {
        let lock = self.connect_lazy()?;
        lock.ensure_schema().await?;
        Ok(lock)
    }

    /// Builds the service without any I/O: connections open, and the table is created, on
    /// first use.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a malformed URL,
    /// unknown scheme, disabled dialect or bad setting, or when called outside a tokio runtime.
    pub fn connect_lazy(self) -> Result<SqlLock> {
        let config = self.config()?;
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::invalid_input(
                "lock-sql needs a tokio runtime: build the lock service inside one",
            ));
        }
        let db = Db::new(&config)?;
        let wakeups = match &db {
            #[cfg(feature = "postgres")]
            Db::Postgres(pg) => Wakeups::postgres(pg),
            #[allow(unreachable_patterns)]
            _ => Wakeups::local(),
        };
        let inner = Inner {
            config,
            db,
            wakeups,
            schema: OnceCell::new(),
        };
        Ok(SqlLock {
            inner: Arc::new(inner),
        })
    }
}

#[async_trait]
impl DistributedLock for SqlLock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        options.validate()?;
        let deadline = options.wait.map(|wait| Instant::now() + wait);
        let inner = &self.inner;
        inner.ensure_schema().await?;
        let mut waiter = inner.wakeups.subscribe();
        let mut attempt = 0_u32;
        loop {
            let owner = Owner::random();
            let conn = inner.db.connection().await;
            let conn = conn.map_err(|error| inner.error(error, "acquire").with_lock(name))?;
            let mut pending = PendingAttempt::new(inner, name, owner, conn);
            let granted_at = Instant::now();
            let outcome = pending
                .run(options.lease)
                .await
                .map_err(|error| inner.error(error, "acquire").with_lock(name))?;
            pending.settle();
            if let Attempt::Granted(fence) = outcome {
                let held = SqlHeld {
                    inner: Arc::clone(inner),
                    name: name.clone(),
                    owner,
                };
                let guard = LockGuard::builder(name.clone(), fence, Arc::new(held))
                    .backend(self.backend())
                    .lease(granted_at, options.lease, options.auto_renew)
                    .build();
                return Ok(Some(guard));
            }
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return Ok(None);
            }
            let wake_at = now + self.pause(attempt, outcome, &options.backoff);
            let wake_at = deadline.map_or(wake_at, |deadline| deadline.min(wake_at));
            waiter.wait(name.as_str(), wake_at).await;
            attempt = attempt.saturating_add(1);
        }
    }

    fn backend(&self) -> &'static str {
        self.inner.config.dialect.backend()
    }

    fn capabilities(&self) -> Capabilities {
        let capabilities = Capabilities::NONE
            .with_fencing()
            .with_lost_detection()
            .with_lease_renewal();
        if self.inner.config.dialect == Dialect::Postgres {
            capabilities.with_server_side_wait()
        } else {
            capabilities
        }
    }
}

impl fmt::Debug for SqlLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlLock")
            .field("dialect", &self.config.dialect)
            .field("url", &redact(&self.config.url))
            .field("table", &self.config.table)
            .field("pool_size", &self.config.pool_size)
            .finish_non_exhaustive()
    }
}
