//! Failures inside the crate, and their conversion into distlock's [`Error`] at the boundary.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{Error, ErrorKind};

/// A statement that failed: the driver's error, or no answer within the operation timeout.
#[derive(Debug)]
pub(crate) enum SqlError {
    /// sqlx reported an error (connection, protocol or database).
    Sqlx(sqlx::Error),
    /// The statement did not complete within the operation timeout.
    TimedOut(Duration),
    /// The database user lacks a privilege the lock service needs on one of its tables.
    Privilege {
        table: String,
        privilege: &'static str,
        source: sqlx::Error,
    },
    /// The failure of one statement that carried many requests (a batch of renewals), shared
    /// by each of them.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Shared(Arc<SqlError>),
}

impl From<sqlx::Error> for SqlError {
    fn from(error: sqlx::Error) -> Self {
        SqlError::Sqlx(error)
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlError::Sqlx(error) => fmt::Display::fmt(error, f),
            SqlError::TimedOut(timeout) => {
                write!(f, "the database did not answer within {timeout:?}")
            }
            SqlError::Privilege { source, .. } => fmt::Display::fmt(source, f),
            SqlError::Shared(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl std::error::Error for SqlError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SqlError::Sqlx(error) | SqlError::Privilege { source: error, .. } => Some(error),
            SqlError::TimedOut(_) => None,
            SqlError::Shared(error) => Some(&**error),
        }
    }
}

impl SqlError {
    /// Converts into distlock's error for `operation` on `backend`: unreachable or silent
    /// servers are [`ErrorKind::Unavailable`], bad configuration [`ErrorKind::InvalidInput`],
    /// everything else [`ErrorKind::Backend`].
    pub(crate) fn into_error(self, backend: &'static str, operation: &'static str) -> Error {
        let (kind, message) = self.describe(backend);
        Error::new(kind, message)
            .with_backend(backend)
            .with_operation(operation)
            .with_source(self)
    }

    /// The kind and message of [`into_error`](Self::into_error).
    fn describe(&self, backend: &str) -> (ErrorKind, String) {
        match self {
            SqlError::TimedOut(timeout) => (
                ErrorKind::Unavailable,
                format!("no answer from the database within the operation timeout {timeout:?}"),
            ),
            SqlError::Sqlx(error) => classify(error, backend),
            SqlError::Privilege {
                table, privilege, ..
            } => (
                ErrorKind::Backend,
                format!(
                    "the database user lacks the {privilege} privilege on table {table}, which \
                     the lock service needs: grant it (lock-sql's README, \"Least privilege\", \
                     lists every grant)"
                ),
            ),
            SqlError::Shared(error) => error.describe(backend),
        }
    }
}

fn classify(error: &sqlx::Error, backend: &str) -> (ErrorKind, String) {
    use sqlx::Error as E;
    let protocol = match backend {
        "postgres" => "PostgreSQL",
        "mysql" => "MySQL",
        _ => "SQLite",
    };
    match error {
        E::Protocol(_) => (
            ErrorKind::Unavailable,
            format!(
                "the server does not speak the {protocol} protocol: check the host and port \
                 (and the TLS settings)"
            ),
        ),
        E::Database(database) if database.message().contains("no encryption") => (
            ErrorKind::Unavailable,
            "the server takes TLS connections only: set sslmode=require or stricter".to_owned(),
        ),
        E::Database(database) if database.message().contains("pg_hba.conf") => (
            ErrorKind::Backend,
            "the server's pg_hba.conf admits no such connection (host, user, database, TLS)"
                .to_owned(),
        ),
        E::Database(database) if is_auth_failure(database.code().as_deref()) => (
            ErrorKind::Backend,
            format!(
                "the database refused the credentials: check the user and password in the URL{}",
                if backend == "mysql" {
                    // MariaDB answers a plaintext client of a `require_secure_transport` server,
                    // and a client without the certificate its account requires, with the same
                    // "Access denied" as a wrong password.
                    ", ssl-mode if the server takes TLS connections only, and tls_cert and \
                     tls_key (ssl-cert, ssl-key) if the account requires a client certificate \
                     (REQUIRE X509, SUBJECT or ISSUER)"
                } else {
                    ""
                }
            ),
        ),
        E::PoolTimedOut => (
            ErrorKind::Unavailable,
            "no database connection within the connect timeout (server unreachable, silent, or \
             every pooled connection busy: see the pool sizing rule)"
                .to_owned(),
        ),
        E::PoolClosed => (
            ErrorKind::Unavailable,
            "the connection pool is closed".to_owned(),
        ),
        E::Tls(_) => tls_failure(),
        E::Io(io)
            if io
                .get_ref()
                .is_some_and(|inner| inner.is::<rustls::Error>()) =>
        {
            tls_failure()
        }
        E::Io(_) | E::WorkerCrashed => (
            ErrorKind::Unavailable,
            "the database connection failed".to_owned(),
        ),
        E::Configuration(_) => (
            ErrorKind::InvalidInput,
            "invalid database configuration".to_owned(),
        ),
        _ => (
            ErrorKind::Backend,
            "the database reported an error".to_owned(),
        ),
    }
}

/// A handshake that failed: a certificate not trusted, for another host, expired; a server
/// without TLS; the rustls error follows as the source.
fn tls_failure() -> (ErrorKind, String) {
    (
        ErrorKind::Unavailable,
        "no TLS session with the database: check tls_ca (sslrootcert, ssl-ca), that the URL's \
         host is a name the server's certificate carries, and the server's TLS set-up"
            .to_owned(),
    )
}

/// PostgreSQL's `invalid_password`/`invalid_authorization_specification`, MySQL's
/// `ER_ACCESS_DENIED_ERROR` and `ER_DBACCESS_DENIED_ERROR`.
fn is_auth_failure(code: Option<&str>) -> bool {
    matches!(code, Some("28P01" | "28000" | "1045" | "1044"))
}

/// Runs `statement`, giving up with [`SqlError::TimedOut`] after `timeout`: bounded by the
/// process's one keeper of request limits, not a timer per statement.
pub(crate) async fn timed<T>(
    timeout: Duration,
    statement: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, SqlError> {
    match lock_core::backend::timeout(timeout, statement).await {
        Ok(result) => result.map_err(SqlError::Sqlx),
        Err(_elapsed) => Err(SqlError::TimedOut(timeout)),
    }
}

/// The error for an invalid connection URL; the URL is left out because it may hold a password.
pub(crate) fn invalid_url(dialect: &str, error: sqlx::Error) -> Error {
    Error::invalid_input(format!("invalid {dialect} connection URL: {error}"))
}
