//! The conformance suite and the SQL cases on a real MariaDB server.

mod support;

#[path = "mysql/acquire_statements.rs"]
mod acquire_statements;
#[path = "mysql/grant_statement.rs"]
mod grant_statement;
#[path = "mysql/handoff.rs"]
mod handoff;
#[path = "mysql/parking.rs"]
mod parking;
#[path = "mysql/rolled_back.rs"]
mod rolled_back;

use std::sync::{Arc, OnceLock};

use lock_testkit::servers::{MariaDbServer, external_url};
use lock_testkit::{ConformanceTarget, require};
use support::SqlTarget;

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

support::sql_cases!(target());

support::gathered_renewal_cases!(url());

/// `mariadb://` URLs are spoken as MySQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mariadb_scheme_connects() {
    use lock_core::DistributedLockExt;
    let Some(url) = url() else { return };
    let mariadb = url.replacen("mysql://", "mariadb://", 1);
    let lock = lock_sql::SqlLock::builder(&mariadb)
        .connect()
        .await
        .expect("connect mariadb://");
    assert_eq!(lock_core::DistributedLock::backend(&lock), "mysql");
    lock.try_acquire("mariadb-scheme")
        .await
        .expect("try")
        .expect("free")
        .release()
        .await
        .expect("release");
}
