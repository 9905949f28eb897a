//! Options and URLs: extreme durations, and the same malformed URLs refused the same way on
//! every scheme, before any I/O, without showing a password.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLockExt, ErrorKind};
use tokio::time::Instant;

use super::support::{client, unique_name};
use crate::ConformanceTarget;

/// A wait of `Duration::MAX` waits without limit (here: the lock is free, so it is granted);
/// a lease of `Duration::MAX` is refused with `InvalidInput`. Never a panic. Through the URL
/// (`wait=<u64::MAX>ms`, `lease=<u64::MAX>ms`) the same, and a `connect_timeout` or
/// `operation_timeout` of `u64::MAX` ms means no limit: the lock works.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn duration_max_waits_forever_and_refuses_as_a_lease(target: Arc<dyn ConformanceTarget>) {
    let lock = client(&target).await;
    let name = unique_name("duration_max");
    let forever = AcquireOptions::default().with_wait(Some(Duration::MAX));
    let guard = lock.acquire_with_options(&name, &forever).await;
    let guard = guard
        .expect("acquire with a wait of Duration::MAX")
        .expect("granted");
    guard.release().await.expect("release");
    let mut endless = AcquireOptions::default();
    endless.lease = Duration::MAX;
    let error = lock
        .acquire_with_options(&name, &endless)
        .await
        .expect_err("accepted");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    let Some(url) = target.url() else {
        eprintln!("SKIPPED duration_max through the URL: the target has no URL");
        return;
    };
    let huge = format!("{}ms", u64::MAX);
    let waiting = target.connect_url(&with_param(&url, "wait", &huge)).await;
    let waiting = waiting.expect("connect with wait=u64::MAX ms");
    let guard = waiting
        .acquire(&name)
        .await
        .expect("acquire with the URL's endless wait");
    guard.release().await.expect("release");
    let refused = target.connect_url(&with_param(&url, "lease", &huge)).await;
    let error = refused.map(drop).expect_err("lease=u64::MAX ms accepted");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    for timeout in ["connect_timeout", "operation_timeout"] {
        let unlimited = target.connect_url(&with_param(&url, timeout, &huge)).await;
        let unlimited =
            unlimited.unwrap_or_else(|error| panic!("connect with {timeout}={huge}: {error}"));
        let guard = unlimited.acquire(&name).await;
        let guard = guard.unwrap_or_else(|error| panic!("acquire with {timeout}={huge}: {error}"));
        guard.release().await.expect("release");
    }
}

/// `url` with `key=value` added to its query.
fn with_param(url: &str, key: &str, value: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{key}={value}")
}

/// One set of malformed URLs, made from the target's scheme: a missing host, a bad port (for
/// schemes with hosts), an unknown parameter, a duration without a unit, a broken percent
/// escape. Each is `InvalidInput` worded `invalid SCHEME URL "...": ...`, naming what is
/// wrong, within 100 ms (the hosts are unroutable: any I/O would hang), and no error or `Debug`
/// output shows the password.
///
/// # Cancel safety
///
/// Cancel safe: nothing is connected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn malformed_urls_are_invalid_input_before_io(target: Arc<dyn ConformanceTarget>) {
    let Some(url) = target.url() else {
        eprintln!("SKIPPED malformed_urls: the target has no URL");
        return;
    };
    let (scheme, _) = url.split_once(':').unwrap_or_default();
    let hosts = url.starts_with(&format!("{scheme}://")) && scheme != "sqlite";
    let secret = "s3cret-pw";
    // TEST-NET-1, port 9: nothing answers, so a client that tried to connect would hang.
    let base = if hosts {
        format!("{scheme}://user:{secret}@192.0.2.1:9/x")
    } else {
        // A file URL has no password to hide.
        format!("{scheme}:/nonexistent/dir/locks.db")
    };
    let mut cases = vec![
        (
            with_param(&base, "bogus", "1"),
            "unknown parameter \"bogus\"",
        ),
        (with_param(&base, "connect_timeout", "250"), "no unit"),
        (format!("{base}%zz"), "percent-encoded"),
    ];
    if hosts {
        cases.push((format!("{scheme}://user:{secret}@/x"), "no host"));
        cases.push((
            format!("{scheme}://user:{secret}@192.0.2.1:99999/x"),
            "port \"99999\"",
        ));
    }
    for (bad, problem) in cases {
        let started = Instant::now();
        let outcome = target.connect_url(&bad).await;
        let elapsed = started.elapsed();
        let error = outcome.map(drop).expect_err(&format!("{bad} accepted"));
        let message = error.to_string();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad}: {message}");
        assert!(
            message.contains(&format!("invalid {scheme} URL \"")) && message.contains(problem),
            "{bad}: {message:?} does not say `invalid {scheme} URL \"...\": ...{problem}...`"
        );
        let debug = format!("{error:?}");
        assert!(
            !message.contains(secret) && !debug.contains(secret),
            "{bad}: {debug}"
        );
        assert!(
            elapsed < Duration::from_millis(100),
            "{bad}: refused only after {elapsed:?}"
        );
    }
}
