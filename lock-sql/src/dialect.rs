//! Which SQL database a URL names, and whether this build supports it.

use std::fmt;

use lock_core::{Error, Result};

/// The SQL dialects this crate speaks. Each needs the Cargo feature of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// PostgreSQL: `postgres://` or `postgresql://`.
    Postgres,
    /// MySQL or MariaDB: `mysql://` or `mariadb://`.
    MySql,
    /// SQLite: `sqlite://PATH`, `sqlite:PATH` or `sqlite::memory:`.
    Sqlite,
}

impl Dialect {
    /// The dialect a URL's scheme names.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for an unknown scheme or
    /// one whose Cargo feature this build lacks.
    pub fn from_url(url: &str) -> Result<Self> {
        let scheme = url
            .split_once(':')
            .map(|(scheme, _)| scheme.to_ascii_lowercase())
            .ok_or_else(|| {
                Error::invalid_input(
                    "not a SQL URL: expected postgres://, mysql://, mariadb:// or sqlite:",
                )
            })?;
        let dialect = match scheme.as_str() {
            "postgres" | "postgresql" => Dialect::Postgres,
            "mysql" | "mariadb" => Dialect::MySql,
            "sqlite" => Dialect::Sqlite,
            other => {
                return Err(Error::invalid_input(format!(
                    "unknown SQL URL scheme {other:?}: expected postgres, postgresql, mysql, \
                     mariadb or sqlite"
                )));
            }
        };
        if !dialect.enabled() {
            return Err(Error::invalid_input(format!(
                "{scheme}:// URLs need lock-sql's `{}` feature, which this build does not have",
                dialect.feature()
            )));
        }
        Ok(dialect)
    }

    /// The backend name guards and errors carry: `"postgres"`, `"mysql"` or `"sqlite"`.
    pub const fn backend(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgres",
            Dialect::MySql => "mysql",
            Dialect::Sqlite => "sqlite",
        }
    }

    /// The Cargo feature that enables this dialect.
    pub const fn feature(self) -> &'static str {
        self.backend()
    }

    /// Whether this build includes the dialect.
    pub const fn enabled(self) -> bool {
        match self {
            Dialect::Postgres => cfg!(feature = "postgres"),
            Dialect::MySql => cfg!(feature = "mysql"),
            Dialect::Sqlite => cfg!(feature = "sqlite"),
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.backend())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::ErrorKind;

    #[test]
    fn schemes_map_to_dialects() {
        let cases = [
            ("postgres://u@h/db", Dialect::Postgres),
            ("PostgreSQL://h", Dialect::Postgres),
            ("mysql://root@h/db", Dialect::MySql),
            ("mariadb://root@h/db", Dialect::MySql),
            ("sqlite://locks.db", Dialect::Sqlite),
            ("sqlite::memory:", Dialect::Sqlite),
        ];
        for (url, dialect) in cases {
            if dialect.enabled() {
                assert_eq!(Dialect::from_url(url).expect(url), dialect);
            } else {
                let error = Dialect::from_url(url).expect_err(url);
                assert!(error.to_string().contains("feature"), "{error}");
            }
        }
    }

    #[test]
    fn unknown_schemes_are_invalid_input() {
        for url in ["redis://h", "no scheme", "oracle://h"] {
            let error = Dialect::from_url(url).expect_err(url);
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        }
    }
}
