//! The builder: a URL, the options every service shares, and the SQL backend's own.

use std::fmt;

use lock_core::Result;
use lock_core::backend::{ServiceBuilder, ServiceOptions};
use lock_core::url::redact;

use crate::SqlLock;
use crate::settings::{Settings, SqlOptions};

/// Settings for a [`SqlLock`]: start with [`SqlLock::builder`].
///
/// Every setting can also come from the URL's query (`table`, `pool_size`, and the shared
/// `connect_timeout`, `operation_timeout`, `lease`, `wait`, ... of [`ServiceBuilder`]); a
/// builder method overrides the URL. The driver's own parameters (`sslmode`, `ssl-ca`,
/// `application_name`, SQLite's `mode`, ...) pass through to it; anything else is refused.
/// Nothing is checked until [`connect`](SqlLockBuilder::connect) or
/// [`connect_lazy`](SqlLockBuilder::connect_lazy). `Debug` output hides passwords.
#[derive(Clone)]
pub struct SqlLockBuilder {
    url: String,
    service: ServiceOptions,
    sql: SqlOptions,
}

impl SqlLockBuilder {
    pub(crate) fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            service: ServiceOptions::default(),
            sql: SqlOptions::default(),
        }
    }

    /// The lock table (default [`TableName::DEFAULT`](crate::TableName::DEFAULT); URL `table`);
    /// must be a plain identifier.
    #[must_use]
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.sql.table = Some(table.into());
        self
    }

    /// The most connections the pool opens (default 10; SQLite files 4, `sqlite::memory:` 1;
    /// URL `pool_size`). Holds do not keep a connection: size the pool for statements in
    /// flight, see the README.
    #[must_use]
    pub fn pool_size(mut self, size: u32) -> Self {
        self.sql.pool_size = Some(size);
        self
    }

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
    /// unknown scheme or parameter, disabled dialect or bad setting (before any I/O);
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when no connection can be
    /// made within the connect timeout; [`ErrorKind::Backend`](lock_core::ErrorKind::Backend)
    /// when the database refuses to create the table.
    pub async fn connect(self) -> Result<SqlLock> {
        let lock = self.connect_lazy()?;
        lock.ensure_schema_or_diagnose().await?;
        Ok(lock)
    }

    /// Builds the service without any I/O: connections open, and the table is created, on
    /// first use.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect) before any I/O, and when called outside a tokio runtime.
    pub fn connect_lazy(self) -> Result<SqlLock> {
        let settings = Settings::resolve(&self.url, &self.service, &self.sql)?;
        SqlLock::from_settings(settings)
    }
}

impl ServiceBuilder for SqlLockBuilder {
    fn service_options(&mut self) -> &mut ServiceOptions {
        &mut self.service
    }
}

impl fmt::Debug for SqlLockBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlLockBuilder")
            .field("url", &redact(&self.url))
            .field("service", &self.service)
            .field("table", &self.sql.table)
            .field("pool_size", &self.sql.pool_size)
            .finish()
    }
}
