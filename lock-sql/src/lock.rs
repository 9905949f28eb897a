//! The lock service: one pool, one lock table, any number of lock names.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use async_trait::async_trait;
use lock_core::{
    AcquireOptions, Capabilities, Claim, DistributedLock, Error, Leader, LeaderTicks, LockGuard,
    LockName, LockStatus, Result,
};
use tokio::sync::OnceCell;

use crate::claim_steps::{ELECTION, SqlClaimSteps};
use crate::db::{Conn, Db, Owner};
use crate::error::SqlError;
use crate::settings::Settings;
use crate::steps::SqlSteps;
use crate::wakeups::Wakeups;
use crate::{Dialect, SqlLockBuilder, TableName};

#[cfg(feature = "testing")]
mod test_hooks;

/// A lock service on one SQL database: one pool, one lock table, any number of lock names.
///
/// Cheap to clone (clones share the pool and `with_lock` re-entry). Build with
/// [`SqlLock::builder`].
#[derive(Clone)]
pub struct SqlLock {
    pub(crate) steps: Arc<SqlSteps>,
}

/// State shared by the service and its holds.
pub(crate) struct Inner {
    pub(crate) settings: Settings,
    pub(crate) db: Db,
    pub(crate) wakeups: Wakeups,
    pub(crate) leases: lock_core::backend::Leases,
    schema: OnceCell<()>,
}

impl Inner {
    pub(crate) fn error(&self, error: SqlError, operation: &'static str) -> Error {
        error
            .into_error(self.settings.dialect.backend(), operation)
            .with_server(self.settings.server.clone())
    }

    pub(crate) async fn ensure_schema(&self) -> Result<()> {
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
    /// Settings for a lock service on the database `url` names (see [`SqlLockBuilder`]):
    /// `postgres://`, `postgresql://`, `mysql://`, `mariadb://` (spoken as MySQL),
    /// `sqlite:PATH` or `sqlite://PATH` (the file is created if missing) and `sqlite::memory:`
    /// (private to this service).
    pub fn builder(url: &str) -> SqlLockBuilder {
        SqlLockBuilder::new(url)
    }

    pub(crate) fn from_settings(settings: Settings) -> Result<Self> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::invalid_input(
                "lock-sql needs a tokio runtime: build the lock service inside one",
            ));
        }
        let db = Db::new(&settings)?;
        let wakeups = match &db {
            #[cfg(feature = "postgres")]
            Db::Postgres(pg) => Wakeups::postgres(pg),
            #[allow(unreachable_patterns)]
            _ => Wakeups::local(),
        };
        let inner = Inner {
            settings,
            db,
            wakeups,
            leases: lock_core::backend::Leases::default(),
            schema: OnceCell::new(),
        };
        Ok(Self {
            steps: Arc::new(SqlSteps {
                inner: Arc::new(inner),
                tries: AtomicU64::new(0),
            }),
        })
    }

    fn inner(&self) -> &Inner {
        &self.steps.inner
    }

    /// Creates those of the lock table, its waiters table and its claims table that do not
    /// exist, adds the columns a lock table made by an earlier version lacks (after checking
    /// the catalog, so tables that exist and are up to date are never created or altered),
    /// and on PostgreSQL and MySQL/MariaDB checks that the user holds every privilege the
    /// service needs on them (statements that match no row). Acquiring does this on first use;
    /// call it to surface permission problems early.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: each statement is idempotent (`IF NOT EXISTS`, columns added only when
    /// missing, checks that change nothing); calling again finishes what a cancelled call
    /// began.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when the database cannot
    /// be reached in time, [`ErrorKind::Backend`](lock_core::ErrorKind::Backend) when it refuses
    /// (for example, no permission to create a missing table, or a needed privilege missing:
    /// the message names the table and the privilege).
    pub async fn ensure_schema(&self) -> Result<()> {
        self.inner().ensure_schema().await
    }

    /// [`ensure_schema`](Self::ensure_schema), and when no connection could be had, one
    /// direct connection attempt to say why (refused, not the database's protocol, bad
    /// credentials): the pool itself only reports that it timed out.
    pub(crate) async fn ensure_schema_or_diagnose(&self) -> Result<()> {
        let Err(error) = self.ensure_schema().await else {
            return Ok(());
        };
        let pool_timed_out = std::error::Error::source(&error)
            .and_then(|source| source.downcast_ref::<SqlError>())
            .is_some_and(|source| matches!(source, SqlError::Sqlx(sqlx::Error::PoolTimedOut)));
        if !pool_timed_out {
            return Err(error);
        }
        let inner = self.inner();
        match inner
            .db
            .diagnose(inner.settings.service.connect_timeout)
            .await
        {
            Some(cause) => Err(inner.error(cause, "connect")),
            None => Err(error),
        }
    }

    /// The database dialect.
    pub fn dialect(&self) -> Dialect {
        self.inner().settings.dialect
    }

    /// The lock table.
    pub fn table(&self) -> &TableName {
        &self.inner().settings.table
    }
}

#[async_trait]
impl DistributedLock for SqlLock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        lock_core::backend::acquire(&self.steps, name, options).await
    }

    /// Permits and read and write holds in the claims table (`{table}_claims`): one row per
    /// name and kind holds the fencing counter, the holders (each with a lease by the database
    /// clock, renewed like the mutex's) and the queue of waiting acquisitions. Each try reads
    /// the row, applies the grant rule every backend shares, and writes it back by
    /// compare-and-set on its version. Waiters are woken as the mutex's are (notifications on
    /// PostgreSQL, this service's changes elsewhere) and re-check when a blocking lease ends.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a dropped acquisition's queue entry (or a grant whose answer was lost) is
    /// taken out of the row in the background; left alone, a queue entry expires by the
    /// database clock 15 s after its last refresh and a hold when its lease ends.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for an invalid claim or
    /// a permit limit other than the holders'; otherwise as
    /// [`acquire_with`](DistributedLock::acquire_with).
    async fn acquire_claim_with(
        &self,
        name: &LockName,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        claim.validate()?;
        let steps = Arc::new(SqlClaimSteps::new(Arc::clone(&self.steps.inner), claim));
        lock_core::backend::acquire(&steps, name, options).await
    }

    /// A leadership is a write hold on the name's `election` claim row; grants, releases and
    /// new values wake observers (a PostgreSQL notification, or a new row version).
    ///
    /// # Cancel safety
    ///
    /// As [`acquire_claim_with`](DistributedLock::acquire_claim_with).
    ///
    /// # Errors
    ///
    /// As [`acquire_with`](DistributedLock::acquire_with).
    async fn campaign_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let inner = Arc::clone(&self.steps.inner);
        let steps = Arc::new(SqlClaimSteps {
            kind: ELECTION,
            ..SqlClaimSteps::new(inner, Claim::Write)
        });
        lock_core::backend::acquire(&steps, name, options).await
    }

    /// The live holder of the election row by the database clock, and its grant count.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads (and may create the tables on first use).
    ///
    /// # Errors
    ///
    /// `Unavailable` when no connection answers within the timeout, `Backend` for a row this
    /// version cannot read.
    async fn read_leader(&self, name: &LockName) -> Result<Option<Leader>> {
        self.steps.inner.leader(name).await
    }

    /// Ticks on PostgreSQL notifications for the name while the listener is subscribed, else
    /// on each new version of the election row, read every 250 ms.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future or the stream stops it.
    ///
    /// # Errors
    ///
    /// As [`read_leader`](DistributedLock::read_leader), for the first read of the row.
    async fn watch_leader(&self, name: &LockName) -> Result<LeaderTicks> {
        crate::election::ticks(Arc::clone(&self.steps.inner), name.clone()).await
    }

    /// Reads the hold's row (owner label, fencing counter, grant time and lease left by the
    /// database clock) and counts the live entries of the waiters table: every waiting
    /// acquisition keeps one, in whatever process.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads (and may create the tables on first use).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when the database cannot
    /// be reached in time, [`ErrorKind::Backend`](lock_core::ErrorKind::Backend) when it
    /// refuses.
    async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        self.inner().inspect(name).await
    }

    /// The names whose rows hold a live lease and start with `prefix`, sorted.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads (and may create the tables on first use).
    ///
    /// # Errors
    ///
    /// As [`inspect`](DistributedLock::inspect).
    async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        self.inner().list(prefix).await
    }

    /// Clears the row's owner in one statement when its fencing counter is `fencing_token`
    /// and its lease is live; the holder's next renewal finds the row gone and fires its lost
    /// signal. Waiters are woken as by a release: by `NOTIFY` on PostgreSQL, in this service
    /// on the polling dialects (others poll).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the statement either ran or did not.
    ///
    /// # Errors
    ///
    /// As [`inspect`](DistributedLock::inspect).
    async fn force_release(&self, name: &LockName, fencing_token: u64) -> Result<bool> {
        self.inner().force_release(name, fencing_token).await
    }

    fn backend(&self) -> &'static str {
        self.dialect().backend()
    }

    fn capabilities(&self) -> Capabilities {
        let capabilities = Capabilities::NONE
            .with_fencing()
            .with_lost_detection()
            .with_lease_renewal()
            .with_semaphore()
            .with_rw_lock()
            .with_election()
            .with_fair_fifo();
        if self.dialect() == Dialect::Postgres {
            capabilities.with_server_side_wait()
        } else {
            capabilities
        }
    }

    fn default_options(&self) -> AcquireOptions {
        self.inner().settings.service.defaults.clone()
    }

    fn service_identity(&self) -> usize {
        Arc::as_ptr(&self.steps) as usize
    }
}

impl fmt::Debug for SqlLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.inner(), f)
    }
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlLock")
            .field("dialect", &self.settings.dialect)
            .field("url", &self.settings.server)
            .field("table", &self.settings.table)
            .field("pool_size", &self.settings.pool_size)
            .finish_non_exhaustive()
    }
}
