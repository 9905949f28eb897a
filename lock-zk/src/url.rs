//! `zk://` URL parsing.

use std::time::Duration;

use lock_core::{Error, Result};

use crate::{ZkAcl, ZkConfig};

/// Parses `zk://[user:password@]hosts[/chroot][?key=value&...]` into a validated config.
pub(crate) fn parse(url: &str) -> Result<ZkConfig> {
    let rest = url.strip_prefix("zk://").ok_or_else(|| {
        Error::invalid_input(format!(
            "{:?} is not a zk:// URL: write zk://host:2181[,host:2181][/chroot][?options]",
            redact(url)
        ))
    })?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (userinfo, rest) = match rest.rsplit_once('@') {
        Some((userinfo, rest)) => (Some(userinfo), rest),
        None => (None, rest),
    };
    let (hosts, chroot) = match rest.find('/') {
        Some(slash) => (&rest[..slash], Some(&rest[slash..])),
        None => (rest, None),
    };
    let mut builder = ZkConfig::builder(hosts);
    if let Some(chroot) = chroot.filter(|chroot| *chroot != "/") {
        builder = builder.chroot(decode(chroot)?);
    }
    if let Some(userinfo) = userinfo {
        let (user, password) = userinfo.split_once(':').ok_or_else(|| {
            Error::invalid_input("digest credentials must be user:password@ in a zk:// URL")
        })?;
        builder = builder.digest(decode(user)?, decode(password)?);
    }
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = decode(value)?;
        builder = match key {
            "session_timeout" => builder.session_timeout(duration(key, &value)?),
            "connect_timeout" => builder.connect_timeout(duration(key, &value)?),
            "operation_timeout" => builder.operation_timeout(duration(key, &value)?),
            "root" => builder.root(value),
            "acl" => builder.acl(ZkAcl::parse(&value)?),
            _ => {
                return Err(Error::invalid_input(format!(
                    "unknown zk:// option {key:?}; known: session_timeout, connect_timeout, \
                     operation_timeout, root, acl"
                )));
            }
        };
    }
    builder.build()
}

/// `250ms`, `10s`, `2m`, or a bare number of milliseconds.
fn duration(key: &str, value: &str) -> Result<Duration> {
    let (number, unit) = match value.find(|c: char| !c.is_ascii_digit()) {
        Some(split) => value.split_at(split),
        None => (value, "ms"),
    };
    let number: u64 = number.parse().map_err(|_| bad_duration(key, value))?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number.saturating_mul(60))),
        _ => Err(bad_duration(key, value)),
    }
}

fn bad_duration(key: &str, value: &str) -> Error {
    Error::invalid_input(format!(
        "{key}={value:?} is not a duration: write 250ms, 10s, 2m, or milliseconds"
    ))
}

/// Percent-decodes one URL part.
fn decode(part: &str) -> Result<String> {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = part.get(index + 1..index + 3).unwrap_or("");
            let byte = u8::from_str_radix(hex, 16).map_err(|_| {
                Error::invalid_input("a zk:// URL has a % not followed by two hex digits")
            })?;
            out.push(byte);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Error::invalid_input("a zk:// URL part is not UTF-8"))
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_core::ErrorKind;

    #[test]
    fn parses_hosts_chroot_credentials_and_options() {
        let config = parse(
            "zk://bob:p%40ss@h1:2181,h2:2182/apps/x?session_timeout=4s&connect_timeout=1500ms\
             &operation_timeout=2000&root=/locks&acl=creator",
        )
        .expect("valid URL");
        assert_eq!(config.hosts(), "h1:2181,h2:2182");
        assert_eq!(config.chroot(), Some("/apps/x"));
        assert_eq!(config.root(), "/locks");
        assert_eq!(config.session_timeout(), Duration::from_secs(4));
        assert_eq!(config.connect_timeout(), Duration::from_millis(1500));
        assert_eq!(config.operation_timeout(), Duration::from_secs(2));
        assert_eq!(config.digest, Some(("bob".to_owned(), "p@ss".to_owned())));
        assert_eq!(config.acl, ZkAcl::CreatorAll);
    }

    #[tokio::test]
    async fn connect_rejects_bad_urls_before_any_io() {
        // Port 9 (discard) on a TEST-NET address: any attempt to connect would hang, not fail.
        for bad in [
            "zk://192.0.2.1:9?session_timeout=0s",
            "zk://192.0.2.1:9?root=x",
        ] {
            let started = std::time::Instant::now();
            let error = crate::connect(bad).await.expect_err(bad);
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad}: {error}");
            assert!(
                started.elapsed() < Duration::from_millis(100),
                "{bad} did I/O"
            );
        }
    }

    #[test]
    fn plain_url_uses_defaults() {
        let config = parse("zk://127.0.0.1:2181").expect("valid URL");
        assert_eq!(config.chroot(), None);
        assert_eq!(config.root(), ZkConfig::DEFAULT_ROOT);
    }

    #[test]
    fn malformed_urls_are_invalid_input_without_leaking_passwords() {
        for bad in [
            "redis://h:1",
            "zk://",
            "zk://h:99999",
            "zk://h:1/chroot/",
            "zk://h:1?session_timeout=soon",
            "zk://h:1?colour=blue",
            "zk://h:1?acl=world:anyone:q",
            "zk://bob@h:1",
            "zk://h:1/%zz",
        ] {
            let error = parse(bad).expect_err(bad);
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad}: {error}");
        }
        let error = parse("ftp://bob:secret@h").expect_err("wrong scheme");
        assert!(!error.to_string().contains("secret"), "{error}");
    }
}
