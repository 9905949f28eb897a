//! Connecting says why it failed: credentials the database refuses are named, within the
//! connect timeout. (A port that answers in another protocol leaves both SQL clients waiting
//! for a reply: a plain `Unavailable` in time, which the conformance suite checks.)

use std::time::Duration;

use lock_core::ServiceBuilder;
use lock_sql::SqlLock;
use lock_testkit::servers::{MariaDbServer, PostgresServer};
use lock_testkit::{require, scaled_ms};
use tokio::time::Instant;

async fn connect_error(url: &str) -> lock_core::Error {
    let started = Instant::now();
    let timeout = Duration::from_secs(1);
    let error = SqlLock::builder(url)
        .connect_timeout(timeout)
        .operation_timeout(timeout)
        .connect()
        .await
        .expect_err("connected");
    let took = started.elapsed();
    assert!(
        took <= timeout * 2 + scaled_ms(1000),
        "{url}: failed only after {took:?}"
    );
    error
}

/// Bad credentials are named as such (the pool alone would only say it timed out), without
/// the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_are_named() {
    let Some(mariadb) = require(MariaDbServer::start()) else {
        return;
    };
    let Some(postgres) = require(PostgresServer::start()) else {
        return;
    };
    let mysql_url = mariadb.url().replacen("root@", "nobody:wrong@", 1);
    let pg_url = postgres.url().replacen("postgres@", "nobody:wrong@", 1);
    for url in [mysql_url, pg_url] {
        let error = connect_error(&url).await;
        let message = error.to_string();
        assert!(
            message.contains("refused the credentials"),
            "{url}: {message}"
        );
        assert!(!message.contains("wrong"), "the password shows: {message}");
    }
}
