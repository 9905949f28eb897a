//! What a SQL URL (and the builder) configures: parsed with the shared grammar, checked without
//! I/O, and turned back into the URL the driver reads.

use std::fmt;

use lock_core::backend::{Service, ServiceOptions};
use lock_core::url::{LockUrl, percent_encode, redact};
use lock_core::{Error, Result};

use crate::{Dialect, TableName};

/// The parameters a SQL URL takes besides [`ServiceOptions::KEYS`] and the driver's own.
pub(crate) const KEYS: [&str; 2] = ["table", "pool_size"];

/// Parameters the driver (sqlx) reads, per dialect; passed through to it.
fn driver_keys(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Postgres => &[
            "sslmode",
            "ssl-mode",
            "sslrootcert",
            "ssl-root-cert",
            "ssl-ca",
            "sslcert",
            "ssl-cert",
            "sslkey",
            "ssl-key",
            "statement-cache-capacity",
            "application_name",
            "options",
            "host",
            "hostaddr",
            "port",
            "dbname",
            "user",
            "password",
        ],
        Dialect::MySql => &[
            "sslmode",
            "ssl-mode",
            "sslca",
            "ssl-ca",
            "sslcert",
            "ssl-cert",
            "sslkey",
            "ssl-key",
            "statement-cache-capacity",
            "charset",
            "collation",
            "socket",
            "timezone",
            "time-zone",
        ],
        Dialect::Sqlite => &["mode", "cache", "immutable", "vfs"],
    }
}

/// Settings the builder may set; each overrides the URL parameter of the same name.
#[derive(Clone, Debug, Default)]
pub(crate) struct SqlOptions {
    pub(crate) table: Option<String>,
    pub(crate) pool_size: Option<u32>,
}

/// Everything a service needs, checked.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) dialect: Dialect,
    /// The URL for sqlx: this crate's parameters removed, `mariadb://` spelled `mysql://`.
    pub(crate) driver_url: String,
    /// The URL as given, password hidden.
    pub(crate) server: String,
    /// An in-memory SQLite database (private to the service).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) memory: bool,
    pub(crate) table: TableName,
    pub(crate) pool_size: u32,
    pub(crate) service: Service,
}

impl Settings {
    /// Parses `url` with the builder's overrides.
    pub(crate) fn resolve(
        url: &str,
        service: &ServiceOptions,
        options: &SqlOptions,
    ) -> Result<Self> {
        let scheme = url
            .split_once(':')
            .map(|(scheme, _)| scheme)
            .unwrap_or_default();
        let dialect = Dialect::from_scheme(scheme, url)?;
        let mut parsed = match dialect {
            Dialect::Sqlite => LockUrl::parse_file(url)?,
            _ => LockUrl::parse(url)?,
        };
        if parsed.hosts().len() > 1 {
            return Err(parsed.invalid("give one host: the lock table lives in one database"));
        }
        let resolved = service.resolve(&mut parsed)?;
        let table = match options.table.clone().or_else(|| parsed.take("table")) {
            Some(table) => {
                TableName::new(table).map_err(|error| parsed.invalid(error.message()))?
            }
            None => TableName::default(),
        };
        let pool_size = match options.pool_size {
            Some(size) => Some(size),
            None => parsed.take_parsed("pool_size", "a number of connections")?,
        };
        let aliased = tls::take_aliases(dialect, &mut parsed)?;
        let driver = driver_keys(dialect);
        let mut passed: Vec<(String, String)> = parsed
            .remaining()
            .into_iter()
            .filter(|(key, _)| driver.contains(&key.as_str()))
            .collect();
        passed.extend(aliased);
        tls::check_files(&parsed, &passed)?;
        parsed.accept(driver);
        let known: Vec<&str> = ServiceOptions::KEYS
            .iter()
            .chain(&KEYS)
            .chain(&tls::KEYS)
            .chain(driver)
            .copied()
            .collect();
        parsed.finish(&known)?;
        let memory = dialect == Dialect::Sqlite
            && (parsed.path() == ":memory:"
                || passed
                    .iter()
                    .any(|(key, value)| key == "mode" && value == "memory"));
        let pool_size = pool_size.unwrap_or(match dialect {
            Dialect::Sqlite if memory => 1,
            Dialect::Sqlite => 4,
            _ => 10,
        });
        if pool_size == 0 {
            return Err(parsed.invalid("pool_size is 0: the pool needs at least one connection"));
        }
        if memory && pool_size != 1 {
            return Err(parsed.invalid(
                "sqlite::memory: needs pool_size 1: each connection would see a different database",
            ));
        }
        Ok(Self {
            dialect,
            driver_url: driver_url(url, dialect, &passed),
            server: parsed.redacted().to_owned(),
            memory,
            table,
            pool_size,
            service: resolved,
        })
    }
}

/// The URL sqlx reads: the base as given (`mariadb` spelled `mysql`) and the driver's
/// parameters.
fn driver_url(url: &str, dialect: Dialect, passed: &[(String, String)]) -> String {
    let base = url.split_once('?').map_or(url, |(base, _)| base);
    let base = match (dialect, base.split_once(':')) {
        (Dialect::MySql, Some((_, rest))) => format!("mysql:{rest}"),
        _ => base.to_owned(),
    };
    if passed.is_empty() {
        return base;
    }
    let query: Vec<String> = passed
        .iter()
        .map(|(key, value)| format!("{key}={}", percent_encode(value)))
        .collect();
    format!("{base}?{}", query.join("&"))
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("dialect", &self.dialect)
            .field("url", &redact(&self.driver_url))
            .field("table", &self.table)
            .field("pool_size", &self.pool_size)
            .field("service", &self.service)
            .finish()
    }
}

/// The error for a URL whose scheme names no SQL dialect, or a dialect this build lacks.
pub(crate) fn not_sql(url: &str) -> Error {
    Error::invalid_input(format!(
        "invalid URL {:?}: not a SQL URL; write postgres://, mysql://, mariadb:// or sqlite:",
        redact(url)
    ))
}

mod tls;

#[cfg(test)]
mod tests;
