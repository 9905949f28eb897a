//! Parsing Redis URLs: hosts, schemes and parameters.

use super::*;

fn resolve(urls: &str) -> Result<Settings> {
    Settings::resolve(urls, &ServiceOptions::default(), &RedisOptions::default())
}

#[test]
fn one_url_many_hosts_or_many_urls_are_the_same_masters() {
    let joined = resolve("redis://:pw@a:1,b:2,c?prefix=x").expect("valid");
    let listed = resolve("redis://:pw@a:1?prefix=x,redis://:pw@b:2,redis://:pw@c").expect("valid");
    let names = |s: &Settings| s.servers.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&joined),
        ["redis://a:1", "redis://b:2", "redis://c:6379"]
    );
    assert_eq!(names(&joined), names(&listed));
    assert_eq!(joined.prefix, "x");
}

#[test]
fn parameters_are_read_and_checked() {
    let settings = resolve(
        "rediss://h/3?wait_replicas=2&wait_timeout=250ms&waiter_ttl=9s&allow_eviction=true",
    )
    .expect("valid");
    assert_eq!(settings.replicas, Some((2, Duration::from_millis(250))));
    assert_eq!(settings.waiter_ttl, Duration::from_secs(9));
    assert!(settings.allow_eviction);
    for bad in [
        "redis://h?prefix=a%7Bb",
        "redis://h?waiter_ttl=10ms",
        "redis://h?wait_replicas=0",
        "redis://h?wait_timeout=1s",
        "redis://h/zero",
        "http://h",
        "",
    ] {
        let error = resolve(bad).expect_err(bad);
        assert_eq!(
            error.kind(),
            lock_core::ErrorKind::InvalidInput,
            "{bad}: {error}"
        );
    }
}

#[test]
fn a_cluster_or_sentinel_url_is_one_deployment() {
    let cluster = resolve("redis+cluster://:pw@a:7000,b?prefix=x&wait_replicas=1").expect("valid");
    assert_eq!(cluster.topology, Topology::Cluster);
    let names = |s: &Settings| s.servers.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&cluster), ["redis+cluster://a:7000,b:6379"]);
    assert_eq!(cluster.replicas, Some((1, Duration::from_millis(500))));

    let sentinel =
        resolve("redis+sentinel://s1,s2:26380/mymaster/2?sentinel_password=pw").expect("valid");
    assert_eq!(sentinel.topology, Topology::Sentinel);
    assert_eq!(
        names(&sentinel),
        ["redis+sentinel://s1:26379,s2:26380/mymaster"]
    );
    assert_eq!(
        resolve("rediss+cluster://a:1").expect("valid").topology,
        Topology::Cluster
    );
}

#[test]
fn cluster_and_sentinel_urls_are_checked_before_any_io() {
    for (bad, says) in [
        ("redis+sentinel://s1:26379", "no master name"),
        ("redis+sentinel://s1/", "no master name"),
        ("redis+sentinel://s1/m/x", "not a number"),
        ("redis+cluster://a:1/3", "only database 0"),
        (
            "redis+cluster://a:1,redis+cluster://b:2",
            "one URL per cluster",
        ),
        ("redis://a:1,redis+cluster://b:2", "one URL per cluster"),
        (
            "redis://a:1?sentinel_password=x",
            "sentinel_password is for",
        ),
        (
            "redis+cluster://a:1?sentinel_password=x",
            "sentinel_password is for",
        ),
        ("redis+clusters://a:1", "redis+cluster or redis+sentinel"),
    ] {
        let error = resolve(bad).expect_err(bad);
        assert_eq!(
            error.kind(),
            lock_core::ErrorKind::InvalidInput,
            "{bad}: {error}"
        );
        assert!(error.to_string().contains(says), "{bad}: {error}");
    }
}
