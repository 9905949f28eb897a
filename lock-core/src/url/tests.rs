use super::*;
use crate::ErrorKind;

#[test]
fn reads_every_part() {
    let mut url = LockUrl::parse(
        "Redis://app:p%40ss@h1:6379,[::1]:7000,h3/0?connect_timeout=250ms&prefix=a%2Fb&flag",
    )
    .expect("valid");
    assert_eq!(url.scheme(), "redis");
    assert_eq!((url.user(), url.password()), (Some("app"), Some("p@ss")));
    let hosts: Vec<String> = url.hosts().iter().map(|h| h.address(1)).collect();
    assert_eq!(hosts, ["h1:6379", "[::1]:7000", "h3:1"]);
    assert_eq!(url.path(), "/0");
    assert_eq!(
        url.take_duration("connect_timeout").expect("duration"),
        Some(Duration::from_millis(250))
    );
    assert_eq!(url.take("prefix").as_deref(), Some("a/b"));
    assert_eq!(url.take("flag").as_deref(), Some(""));
    url.finish(&[]).expect("all taken");
    assert!(!format!("{url:?}").contains("p%40ss"), "{url:?}");
}

#[test]
fn file_urls_keep_their_path() {
    for (text, path) in [
        ("sqlite:///var/lib/x.db", "/var/lib/x.db"),
        ("sqlite://rel/x.db?mode=rwc", "rel/x.db"),
        ("sqlite:x.db", "x.db"),
        ("sqlite::memory:", ":memory:"),
    ] {
        let url = LockUrl::parse_file(text).expect(text);
        assert_eq!(url.path(), path, "{text}");
    }
}

/// Every malformed URL is `InvalidInput`, worded `invalid SCHEME URL "...": problem`, with
/// the password hidden.
#[test]
fn malformed_urls_say_what_is_wrong() {
    let cases = [
        ("redis://:s3cret@/0", "no host"),
        ("redis://u:s3cret@h:99999", "port \"99999\""),
        ("redis://u:s3cret@h:x", "port \"x\""),
        (
            "redis://u:s3cret@h:1?bogus=1",
            "unknown parameter \"bogus\"",
        ),
        ("redis://u:s3cret@h:1?lease=250", "no unit"),
        ("redis://u:s3cret@h:1/%zz", "percent-encoded"),
        ("redis://u:s3cret@h:1?a=1&a=2", "twice"),
        ("redis:h:1", "write redis://HOST:PORT"),
        ("redis://u:s3cret@h%:1", "not a host name"),
    ];
    for (text, problem) in cases {
        let error = LockUrl::parse(text).and_then(|mut url| {
            url.take_duration("lease")?;
            url.finish(&["lease"])
        });
        let error = error.expect_err(text);
        let message = error.to_string();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{text}");
        assert!(message.contains("invalid redis URL \""), "{message}");
        assert!(message.contains(problem), "{text}: {message}");
        assert!(!message.contains("s3cret"), "{message}");
    }
    let error = LockUrl::parse("nothing here").expect_err("no scheme");
    assert!(error.to_string().contains("no scheme"), "{error}");
}

#[test]
fn encoding_round_trips() {
    let value = "a b/c?d=e&f%g~h";
    let encoded = percent_encode(value);
    assert_eq!(encoded, "a%20b%2Fc%3Fd%3De%26f%25g~h");
    assert_eq!(decode::percent_decode(&encoded).as_deref(), Some(value));
}
