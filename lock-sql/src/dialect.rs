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
    /// The dialect a URL's `scheme` names (`url` is for the message).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for an unknown scheme or
    /// one whose Cargo feature this build lacks.
    pub fn from_scheme(scheme: &str, url: &str) -> Result<Self> {
        let dialect = match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => Dialect::Postgres,
            "mysql" | "mariadb" => Dialect::MySql,
            "sqlite" => Dialect::Sqlite,
            _ => return Err(crate::settings::not_sql(url)),
        };
        if !dialect.enabled() {
            return Err(Error::invalid_input(format!(
                "invalid {scheme} URL: it needs lock-sql's `{}` feature, which this build does not have",
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
            ("postgres", Dialect::Postgres),
            ("PostgreSQL", Dialect::Postgres),
            ("mysql", Dialect::MySql),
            ("mariadb", Dialect::MySql),
            ("sqlite", Dialect::Sqlite),
        ];
        for (scheme, dialect) in cases {
            if dialect.enabled() {
                assert_eq!(Dialect::from_scheme(scheme, "x").expect(scheme), dialect);
            } else {
                let error = Dialect::from_scheme(scheme, "x").expect_err(scheme);
                assert!(error.to_string().contains("feature"), "{error}");
            }
        }
    }

    #[test]
    fn unknown_schemes_are_invalid_input() {
        for scheme in ["redis", "", "oracle"] {
            let error = Dialect::from_scheme(scheme, "x").expect_err(scheme);
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
        }
    }
}
