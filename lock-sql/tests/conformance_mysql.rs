//! The conformance suite and the SQL cases on a real MariaDB server.

mod support;

use std::sync::{Arc, OnceLock};

use lock_testkit::servers::{MariaDbServer, external_url};
use lock_testkit::{ConformanceTarget, require};
use support::{SqlTarget, cases};

/// One server for the whole test binary (or `LOCK_TEST_MYSQL_URL`); `None` skips.
fn url() -> Option<String> {
    static SERVER: OnceLock<Option<(Option<MariaDbServer>, String)>> = OnceLock::new();
    let server = SERVER.get_or_init(|| match external_url("MYSQL") {
        Some(url) => Some((None, url)),
        None => require(MariaDbServer::start()).map(|server| {
            let url = server.url();
            (Some(server), url)
        }),
    });
    server.as_ref().map(|(_, url)| url.clone())
}

async fn mysql() -> Option<Arc<dyn ConformanceTarget>> {
    url().map(SqlTarget::shared)
}

fn target() -> Option<SqlTarget> {
    url().map(SqlTarget::plain)
}

lock_testkit::conformance_tests!(mysql());

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stale_holder_cannot_release_or_extend() {
    let Some(target) = target() else { return };
    cases::stale_holder_cannot_release_or_extend(&target).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn small_pool_serves_more_holders_than_connections() {
    let Some(target) = target() else { return };
    cases::small_pool_serves_more_holders_than_connections(&target).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wait_is_bounded_by_the_remaining_lease() {
    let Some(target) = target() else { return };
    cases::wait_is_bounded_by_the_remaining_lease(&target).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fencing_survives_reconnects_and_severs() {
    let Some(target) = target() else { return };
    cases::fencing_survives_reconnects_and_severs(&target).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn table_option_separates_locks() {
    let Some(target) = target() else { return };
    cases::table_option_separates_locks(&target).await;
}

/// `mariadb://` URLs are spoken as MySQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mariadb_scheme_connects() {
    use lock_core::DistributedLockExt;
    let Some(url) = url() else { return };
    let mariadb = url.replacen("mysql://", "mariadb://", 1);
    let lock = lock_sql::connect(&mariadb)
        .await
        .expect("connect mariadb://");
    assert_eq!(lock.backend(), "mysql");
    lock.try_acquire("mariadb-scheme")
        .await
        .expect("try")
        .expect("free")
        .release()
        .await
        .expect("release");
}
