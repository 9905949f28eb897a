//! The one URL grammar of every distlock backend.
//!
//! ```text
//! SCHEME://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PATH][?KEY=VALUE&...]
//! SCHEME:PATH[?KEY=VALUE&...]            (file databases: sqlite:/var/lib/app/locks.db)
//! ```
//!
//! User, password, path and parameter values are percent-decoded. Durations in parameters
//! carry a unit (`250ms`, `5s`, `2m`, `1h`). A backend takes the parameters it knows with the
//! `take_*` methods and calls [`LockUrl::finish`], which refuses any parameter left over and
//! lists the known ones. Every problem is an [`ErrorKind::InvalidInput`](crate::ErrorKind)
//! error worded `invalid SCHEME URL "<the URL, password hidden>": <what is wrong>`, found
//! before any I/O.

mod decode;
mod duration;
mod file;
mod redact;

use std::fmt;
use std::time::Duration;

pub use redact::redact;

/// Percent-encodes everything but unreserved characters (`A-Z a-z 0-9 - . _ ~`): for putting a
/// decoded value back into a URL.
pub fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

use crate::{Error, Result};
pub use decode::percent_decode;
use duration::parse_duration;

/// One `host[:port]` of a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// The host name or IP address (IPv6 without brackets).
    pub name: String,
    /// The port, when the URL gives one.
    pub port: Option<u16>,
}

impl Host {
    /// `name:port`, with brackets around an IPv6 address, and `default_port` where the URL
    /// gives none.
    pub fn address(&self, default_port: u16) -> String {
        let port = self.port.unwrap_or(default_port);
        if self.name.contains(':') {
            format!("[{}]:{port}", self.name)
        } else {
            format!("{}:{port}", self.name)
        }
    }
}

/// A parsed lock-service URL: see the [module docs](self) for the grammar.
///
/// `Debug` and [`redacted`](LockUrl::redacted) hide the password.
#[derive(Clone)]
pub struct LockUrl {
    scheme: String,
    user: Option<String>,
    password: Option<String>,
    hosts: Vec<Host>,
    path: String,
    params: Vec<Param>,
    redacted: String,
}

#[derive(Clone, Debug)]
struct Param {
    key: String,
    value: String,
    taken: bool,
}

impl LockUrl {
    /// Parses a URL with hosts: `SCHEME://[USER[:PASSWORD]@]HOST[:PORT][,...][/PATH][?...]`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a missing scheme or host,
    /// a bad port, a malformed percent escape or a repeated parameter.
    pub fn parse(url: &str) -> Result<Self> {
        let (scheme, rest) = split_scheme(url)?;
        let mut parsed = Self::empty(&scheme, url);
        let Some(rest) = rest.strip_prefix("//") else {
            return Err(parsed.invalid(format!("write {scheme}://HOST:PORT")));
        };
        let (body, query) = split_query(rest);
        parsed.read_query(query)?;
        let (authority, path) = match body.find('/') {
            Some(slash) => body.split_at(slash),
            None => (body, ""),
        };
        let host_list = match authority.rsplit_once('@') {
            Some((user_info, hosts)) => {
                parsed.read_user_info(user_info)?;
                hosts
            }
            None => authority,
        };
        for host in host_list.split(',') {
            let host = parsed.read_host(host)?;
            parsed.hosts.push(host);
        }
        parsed.path = parsed.decode("path", path)?;
        Ok(parsed)
    }

    /// Parses a URL naming a file: `SCHEME:PATH`, `SCHEME://PATH` (both relative unless PATH
    /// starts with `/`) or `SCHEME::memory:`, each with optional `?KEY=VALUE` parameters.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a missing scheme or
    /// path, a malformed percent escape or a repeated parameter.
    pub fn parse_file(url: &str) -> Result<Self> {
        let (scheme, rest) = split_scheme(url)?;
        let mut parsed = Self::empty(&scheme, url);
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let (path, query) = split_query(rest);
        parsed.read_query(query)?;
        if path.is_empty() {
            return Err(parsed.invalid(format!(
                "no file path: write {scheme}:///var/lib/app/locks.db or {scheme}::memory:"
            )));
        }
        parsed.path = parsed.decode("path", path)?;
        Ok(parsed)
    }

    fn empty(scheme: &str, url: &str) -> Self {
        Self {
            scheme: scheme.to_owned(),
            user: None,
            password: None,
            hosts: Vec::new(),
            path: String::new(),
            params: Vec::new(),
            redacted: redact(url),
        }
    }

    fn read_user_info(&mut self, user_info: &str) -> Result<()> {
        let (user, password) = match user_info.split_once(':') {
            Some((user, password)) => (user, Some(password)),
            None => (user_info, None),
        };
        if !user.is_empty() {
            self.user = Some(self.decode("user", user)?);
        }
        if let Some(password) = password {
            self.password = Some(self.decode("password", password)?);
        }
        Ok(())
    }

    fn read_host(&self, host: &str) -> Result<Host> {
        let (name, port) = if let Some(bracketed) = host.strip_prefix('[') {
            let (name, after) = bracketed
                .split_once(']')
                .ok_or_else(|| self.invalid(format!("host {host:?} lacks its closing ]")))?;
            (name, after.strip_prefix(':'))
        } else {
            match host.rsplit_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (host, None),
            }
        };
        if name.is_empty() {
            return Err(self.invalid(format!("no host: write {}://HOST:PORT", self.scheme)));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:".contains(c))
        {
            return Err(self.invalid(format!("host {name:?} is not a host name or IP address")));
        }
        let port = match port {
            None => None,
            Some(port) => match port.parse::<u16>() {
                Ok(port) if port != 0 => Some(port),
                _ => {
                    return Err(
                        self.invalid(format!("port {port:?} is not a number from 1 to 65535"))
                    );
                }
            },
        };
        Ok(Host {
            name: name.to_owned(),
            port,
        })
    }

    fn read_query(&mut self, query: Option<&str>) -> Result<()> {
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (key, value) = (
                self.decode("parameter name", key)?,
                self.decode("parameter value", value)?,
            );
            if self.params.iter().any(|param| param.key == key) {
                return Err(self.invalid(format!("parameter {key:?} is given twice")));
            }
            self.params.push(Param {
                key,
                value,
                taken: false,
            });
        }
        Ok(())
    }

    fn decode(&self, what: &str, part: &str) -> Result<String> {
        percent_decode(part).ok_or_else(|| {
            self.invalid(format!(
                "the {what} has a % that does not start a percent-encoded byte (%XX) of UTF-8"
            ))
        })
    }

    /// An [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) error about this URL:
    /// `invalid SCHEME URL "<redacted URL>": <problem>`.
    pub fn invalid(&self, problem: impl fmt::Display) -> Error {
        Error::invalid_input(format!(
            "invalid {} URL {:?}: {problem}",
            self.scheme, self.redacted
        ))
    }

    /// The scheme, lower-cased.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The user, decoded, if given.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The password, decoded, if given.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The hosts, in the order given; empty for file URLs.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The path, decoded: `""` when absent, otherwise starting with `/` (file URLs: the file).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URL as given, password hidden: for messages and `Debug` output.
    pub fn redacted(&self) -> &str {
        &self.redacted
    }

    /// Takes parameter `key`'s value, marking it known.
    pub fn take(&mut self, key: &str) -> Option<String> {
        let param = self.params.iter_mut().find(|p| p.key == key && !p.taken)?;
        param.taken = true;
        Some(param.value.clone())
    }

    /// Takes parameter `key` as a duration (`250ms`, `5s`, `2m`, `1h`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a value without a unit
    /// or not a duration.
    pub fn take_duration(&mut self, key: &str) -> Result<Option<Duration>> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        parse_duration(&value)
            .map(Some)
            .map_err(|problem| self.invalid(format!("{key}={problem}")))
    }

    /// Takes parameter `key`, parsed as `T` (a number, a boolean, ...).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) naming `expected` when the
    /// value does not parse.
    pub fn take_parsed<T: std::str::FromStr>(
        &mut self,
        key: &str,
        expected: &str,
    ) -> Result<Option<T>> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        value
            .parse()
            .map(Some)
            .map_err(|_| self.invalid(format!("{key}={value:?} is not {expected}")))
    }

    /// The parameters not taken so far, as `(key, value)`: for passing a client library's own
    /// parameters through. Call [`finish`](LockUrl::finish) after checking them.
    pub fn remaining(&self) -> Vec<(String, String)> {
        self.params
            .iter()
            .filter(|p| !p.taken)
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect()
    }

    /// Checks that every parameter was taken (`known` lists them for the message).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) naming the first unknown
    /// parameter and listing the known ones.
    pub fn finish(&self, known: &[&str]) -> Result<()> {
        match self.params.iter().find(|p| !p.taken) {
            None => Ok(()),
            Some(param) => Err(self.invalid(format!(
                "unknown parameter {:?}; {} URLs take {}",
                param.key,
                self.scheme,
                known.join(", ")
            ))),
        }
    }

    /// Marks every parameter named in `keys` as known (a client library reads them).
    pub fn accept(&mut self, keys: &[&str]) {
        for param in &mut self.params {
            if keys.contains(&param.key.as_str()) {
                param.taken = true;
            }
        }
    }
}

impl fmt::Debug for LockUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LockUrl").field(&self.redacted).finish()
    }
}

/// `(scheme, rest)`, the scheme lower-cased and checked.
fn split_scheme(url: &str) -> Result<(String, &str)> {
    let valid = |scheme: &str| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    };
    match url.split_once(':') {
        Some((scheme, rest)) if valid(scheme) => Ok((scheme.to_ascii_lowercase(), rest)),
        _ => Err(Error::invalid_input(format!(
            "invalid URL {:?}: no scheme; write SCHEME://HOST:PORT, for example redis://127.0.0.1:6379",
            redact(url)
        ))),
    }
}

/// `(body, query)` split at the first `?`.
fn split_query(rest: &str) -> (&str, Option<&str>) {
    match rest.split_once('?') {
        Some((body, query)) => (body, Some(query)),
        None => (rest, None),
    }
}

#[cfg(test)]
mod tests;
