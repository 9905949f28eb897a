//! TLS parameters of a SQL URL: distlock's names, the same on every scheme (`tls_ca`,
//! `tls_cert`, `tls_key`), translated into the driver's (`sslrootcert`, `ssl-ca`, ...), and the
//! files they name checked before any connection is tried.

use lock_core::Result;
use lock_core::url::LockUrl;

use crate::Dialect;

/// `(ours, PostgreSQL's, MySQL's)` name of each TLS file parameter.
const ALIASES: [(&str, &str, &str); 3] = [
    ("tls_ca", "sslrootcert", "ssl-ca"),
    ("tls_cert", "sslcert", "ssl-cert"),
    ("tls_key", "sslkey", "ssl-key"),
];

/// distlock's TLS parameters: taken from the URL by [`take_aliases`].
pub(crate) const KEYS: [&str; 3] = ["tls_ca", "tls_cert", "tls_key"];

/// The driver's parameters that name a certificate authority, a client certificate and a
/// client key; each may also hold the PEM text itself.
const CA: [&str; 4] = ["sslrootcert", "ssl-root-cert", "ssl-ca", "sslca"];
const CERT: [&str; 2] = ["sslcert", "ssl-cert"];
const KEY: [&str; 2] = ["sslkey", "ssl-key"];

/// Takes `tls_ca`, `tls_cert` and `tls_key` from `url` and returns them under the driver's
/// names for `dialect`.
///
/// # Errors
///
/// `InvalidInput` for TLS parameters on SQLite, which has no network to protect.
pub(crate) fn take_aliases(dialect: Dialect, url: &mut LockUrl) -> Result<Vec<(String, String)>> {
    let mut passed = Vec::new();
    for (ours, postgres, mysql) in ALIASES {
        let Some(value) = url.take(ours) else {
            continue;
        };
        let theirs = match dialect {
            Dialect::Postgres => postgres,
            Dialect::MySql => mysql,
            Dialect::Sqlite => {
                return Err(url.invalid(format!("{ours}: SQLite files take no TLS parameters")));
            }
        };
        readable(url, ours, &value)?;
        passed.push((theirs.to_owned(), value));
    }
    Ok(passed)
}

/// Checks the TLS files among the driver's parameters: each names a readable file (or holds
/// PEM text), and a client certificate comes with its key.
///
/// # Errors
///
/// `InvalidInput` naming the parameter, before any connection is tried.
pub(crate) fn check_files(url: &LockUrl, passed: &[(String, String)]) -> Result<()> {
    let has = |names: &[&str]| passed.iter().any(|(key, _)| names.contains(&key.as_str()));
    for (index, (key, _)) in passed.iter().enumerate() {
        if passed[..index].iter().any(|(earlier, _)| earlier == key) {
            return Err(url.invalid(format!(
                "{key} is given twice (tls_ca, tls_cert and tls_key are other names for the \
                 driver's own)"
            )));
        }
    }
    if has(&CERT) != has(&KEY) {
        return Err(url.invalid(
            "a client certificate and its key go together: give both tls_cert and tls_key \
             (sslcert and sslkey), or neither",
        ));
    }
    for (key, value) in passed {
        let names_file = [&CA[..], &CERT, &KEY]
            .iter()
            .any(|names| names.contains(&key.as_str()));
        if names_file {
            readable(url, key, value)?;
        }
    }
    Ok(())
}

/// Checks that parameter `key`'s `value` holds PEM text or names a file we can read.
fn readable(url: &LockUrl, key: &str, value: &str) -> Result<()> {
    if value.trim_start().starts_with("-----BEGIN") {
        return Ok(());
    }
    match std::fs::File::open(value) {
        Ok(_) => Ok(()),
        Err(error) => Err(url.invalid(format!("{key} {value:?} cannot be read: {error}"))),
    }
}
