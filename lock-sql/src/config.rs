//! Connection settings: the builder, URL query parameters, and password-free Debug output.

use std::fmt;
use std::time::Duration;

use lock_core::{Error, Result};

use crate::{Dialect, TableName};

/// Query parameters this crate reads (and removes before the URL reaches sqlx).
const PARAMETERS: [&str; 4] = [
    "lock_table",
    "lock_pool_size",
    "lock_connect_timeout_ms",
    "lock_operation_timeout_ms",
];

/// Settings for a [`SqlLock`](crate::SqlLock): start with [`SqlLock::builder`](crate::SqlLock::builder).
///
/// Every setting can also come from the URL's query (`lock_table`, `lock_pool_size`,
/// `lock_connect_timeout_ms`, `lock_operation_timeout_ms`); a builder method overrides the
/// URL. Nothing is checked until [`connect`](SqlLockBuilder::connect) or
/// [`connect_lazy`](SqlLockBuilder::connect_lazy). `Debug` output hides passwords.
#[derive(Clone)]
pub struct SqlLockBuilder {
    pub(crate) url: String,
    pub(crate) table: Option<String>,
    pub(crate) pool_size: Option<u32>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) operation_timeout: Option<Duration>,
}

/// Validated settings.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) dialect: Dialect,
    /// The URL for sqlx: this crate's parameters removed, `mariadb://` spelled `mysql://`.
    pub(crate) url: String,
    pub(crate) table: TableName,
    pub(crate) pool_size: u32,
    pub(crate) connect_timeout: Duration,
    pub(crate) operation_timeout: Duration,
}

impl SqlLockBuilder {
    pub(crate) fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            table: None,
            pool_size: None,
            connect_timeout: None,
            operation_timeout: None,
        }
    }

    /// The lock table (default [`TableName::DEFAULT`]); must be a plain identifier.
    #[must_use]
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = Some(table.into());
        self
    }

    /// The most connections the pool opens (default 10; SQLite files 4, `sqlite::memory:` 1).
    /// Holds do not keep a connection: size the pool for statements in flight, see the README.
    #[must_use]
    pub fn pool_size(mut self, size: u32) -> Self {
        self.pool_size = Some(size);
        self
    }

    /// How long getting a connection may take, including connecting (default 5 s); past it,
    /// operations fail with `Unavailable`.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// How long one statement may take once it has a connection (default 5 s); past it, the
    /// operation fails with `Unavailable`. SQLite's busy timeout is four fifths of it.
    #[must_use]
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = Some(timeout);
        self
    }

    /// Validates everything, without I/O.
    pub(crate) fn config(&self) -> Result<Config> {
        let dialect = Dialect::from_url(&self.url)?;
        let (base, query) = match self.url.split_once('?') {
            Some((base, query)) => (base, query),
            None => (self.url.as_str(), ""),
        };
        let mut kept = Vec::new();
        let mut params = Params::default();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if key.starts_with("lock_") {
                params.set(key, value)?;
            } else {
                kept.push(pair);
            }
        }
        let base = match base.split_once(':') {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("mariadb") => {
                format!("mysql:{rest}")
            }
            _ => base.to_owned(),
        };
        let url = if kept.is_empty() {
            base
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        let memory = dialect == Dialect::Sqlite && is_sqlite_memory(&url);
        let table = self.table.clone().or(params.table);
        let table = table.map_or_else(|| Ok(TableName::default()), TableName::new)?;
        let default_pool = match dialect {
            Dialect::Sqlite if memory => 1,
            Dialect::Sqlite => 4,
            _ => 10,
        };
        let pool_size = self.pool_size.or(params.pool_size).unwrap_or(default_pool);
        if pool_size == 0 {
            return Err(Error::invalid_input(
                "pool size 0: the pool needs at least one connection",
            ));
        }
        if memory && pool_size != 1 {
            return Err(Error::invalid_input(
                "sqlite::memory: needs pool size 1: each connection would see a different database",
            ));
        }
        let connect_timeout = self.connect_timeout.or(params.connect_timeout);
        let operation_timeout = self.operation_timeout.or(params.operation_timeout);
        let (connect_timeout, operation_timeout) = (
            positive("connect timeout", connect_timeout)?,
            positive("operation timeout", operation_timeout)?,
        );
        Ok(Config {
            dialect,
            url,
            table,
            pool_size,
            connect_timeout,
            operation_timeout,
        })
    }
}

/// Whether a SQLite URL names an in-memory database.
pub(crate) fn is_sqlite_memory(url: &str) -> bool {
    url.contains(":memory:") || url.contains("mode=memory")
}

fn positive(what: &str, value: Option<Duration>) -> Result<Duration> {
    match value {
        None => Ok(Duration::from_secs(5)),
        Some(value) if value.is_zero() => Err(Error::invalid_input(format!(
            "{what} is zero: every operation would fail at once"
        ))),
        Some(value) => Ok(value),
    }
}

/// This crate's URL parameters.
#[derive(Default)]
struct Params {
    table: Option<String>,
    pool_size: Option<u32>,
    connect_timeout: Option<Duration>,
    operation_timeout: Option<Duration>,
}

impl Params {
    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let number = || {
            value.parse::<u64>().map_err(|_| {
                Error::invalid_input(format!(
                    "URL parameter {key}={value:?} is not a whole number"
                ))
            })
        };
        match key {
            "lock_table" => self.table = Some(value.to_owned()),
            "lock_pool_size" => {
                let size = u32::try_from(number()?)
                    .map_err(|_| Error::invalid_input(format!("{key}={value} is too large")))?;
                self.pool_size = Some(size);
            }
            "lock_connect_timeout_ms" => {
                self.connect_timeout = Some(Duration::from_millis(number()?));
            }
            "lock_operation_timeout_ms" => {
                self.operation_timeout = Some(Duration::from_millis(number()?));
            }
            _ => {
                return Err(Error::invalid_input(format!(
                    "unknown URL parameter {key:?}; lock-sql reads {}",
                    PARAMETERS.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// `url` with any password replaced by `***` (in the user info and in `password=` parameters).
pub(crate) fn redact(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut out = match base.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            let authority = match authority.rsplit_once('@') {
                Some((user_info, host)) => match user_info.split_once(':') {
                    Some((user, _password)) => format!("{user}:***@{host}"),
                    None => format!("{user_info}@{host}"),
                },
                None => authority.to_owned(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => base.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.to_ascii_lowercase().contains("password") => {
                    format!("{key}=***")
                }
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

impl fmt::Debug for SqlLockBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlLockBuilder")
            .field("url", &redact(&self.url))
            .field("table", &self.table)
            .field("pool_size", &self.pool_size)
            .field("connect_timeout", &self.connect_timeout)
            .field("operation_timeout", &self.operation_timeout)
            .finish()
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("dialect", &self.dialect)
            .field("url", &redact(&self.url))
            .field("table", &self.table)
            .field("pool_size", &self.pool_size)
            .field("connect_timeout", &self.connect_timeout)
            .field("operation_timeout", &self.operation_timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::ErrorKind;

    #[test]
    fn own_parameters_are_read_and_removed_others_kept() {
        let builder = SqlLockBuilder::new(
            "mariadb://root@h:3306/db?lock_table=jobs&ssl-mode=disabled&lock_pool_size=3\
             &lock_connect_timeout_ms=250&lock_operation_timeout_ms=750",
        );
        let config = builder.config().expect("valid");
        assert_eq!(config.url, "mysql://root@h:3306/db?ssl-mode=disabled");
        assert_eq!(config.table.as_str(), "jobs");
        assert_eq!(config.pool_size, 3);
        assert_eq!(config.connect_timeout, Duration::from_millis(250));
        assert_eq!(config.operation_timeout, Duration::from_millis(750));
    }

    #[test]
    fn builder_overrides_url_and_defaults_fit_the_dialect() {
        let config = SqlLockBuilder::new("sqlite://x.db?lock_table=a&mode=rwc")
            .table("b")
            .pool_size(7)
            .config()
            .expect("valid");
        assert_eq!((config.table.as_str(), config.pool_size), ("b", 7));
        assert_eq!(config.url, "sqlite://x.db?mode=rwc");
        let defaults = [
            ("postgres://h/db", 10),
            ("sqlite://x.db", 4),
            ("sqlite::memory:", 1),
        ];
        for (url, pool) in defaults {
            let config = SqlLockBuilder::new(url).config().expect(url);
            assert_eq!(config.pool_size, pool, "{url}");
            assert_eq!(config.table.as_str(), TableName::DEFAULT);
            assert_eq!(config.connect_timeout, Duration::from_secs(5));
        }
    }

    #[test]
    fn bad_settings_are_invalid_input() {
        let cases = [
            SqlLockBuilder::new("postgres://h/db?lock_pool_size=-1"),
            SqlLockBuilder::new("postgres://h/db").pool_size(0),
            SqlLockBuilder::new("postgres://h/db").connect_timeout(Duration::ZERO),
            SqlLockBuilder::new("postgres://h/db").table("a b"),
            SqlLockBuilder::new("postgres://h/db?lock_lease_ms=5"),
        ];
        for builder in cases {
            let error = builder.config().expect_err("accepted");
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        }
    }

    #[test]
    fn redact_hides_passwords_only() {
        assert_eq!(
            redact("postgres://app:s3cret@db:5432/x?sslmode=require&password=p"),
            "postgres://app:***@db:5432/x?sslmode=require&password=***"
        );
        assert_eq!(redact("mysql://root@h/db"), "mysql://root@h/db");
        assert_eq!(redact("sqlite::memory:"), "sqlite::memory:");
    }
}
