//! MariaDB as a user holding only the privileges the README's "Least privilege" section
//! grants, on tables an administrator created first: the conformance suite passes, and a user
//! missing one of those privileges is refused at connect, before any lock is granted.

mod support;

use std::sync::Arc;

use lock_testkit::ConformanceTarget;
use lock_testkit::servers::MariaDbServer;
use support::SqlTarget;
use support::accounts::{self, Prepared};

async fn setup() -> Option<&'static Prepared<MariaDbServer>> {
    static SETUP: tokio::sync::OnceCell<Option<Prepared<MariaDbServer>>> =
        tokio::sync::OnceCell::const_new();
    SETUP
        .get_or_init(|| accounts::prepare(MariaDbServer::start, MariaDbServer::url))
        .await
        .as_ref()
}

async fn mysql() -> Option<Arc<dyn ConformanceTarget>> {
    setup()
        .await
        .map(|setup| SqlTarget::shared(setup.user.clone()))
}

lock_testkit::conformance_tests!(mysql());

/// Without `DELETE` on the waiters table, waiter entries could never be removed: refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_without_delete_on_the_waiters_table_is_refused_at_connect() {
    let Some(setup) = setup().await else { return };
    accounts::assert_refused_without(&setup.admin, "distlock_locks_waiters", "DELETE").await;
}
