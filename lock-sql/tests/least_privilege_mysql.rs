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

/// A release by a user that may not end another user's statements rings nobody, and still
/// succeeds: the waiter, parked as another user, notices the release when its park ends,
/// within about a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_by_another_user_reaches_a_parked_waiter_within_a_second() {
    use lock_core::{DistributedLock, DistributedLockExt};
    use lock_testkit::scaled_ms;
    use tokio::time::Instant;

    let Some(setup) = setup().await else { return };
    let connect = |url: String| async move {
        let lock = lock_sql::SqlLock::builder(&url).connect().await;
        Arc::new(lock.expect("connect"))
    };
    let (holder, waiting) = (
        connect(setup.user.clone()).await,
        connect(setup.admin.clone()).await,
    );
    let name = format!("other-user-{:08x}", rand::random::<u32>());
    let name = lock_core::LockName::new(name).expect("name");
    let held = holder.try_acquire(&name).await.expect("try");
    let task = {
        let (waiting, name) = (Arc::clone(&waiting), name.clone());
        tokio::spawn(async move {
            let guard = waiting.acquire_timeout(&name, scaled_ms(30_000)).await;
            (guard.expect("granted in time"), Instant::now())
        })
    };
    let deadline = Instant::now() + scaled_ms(10_000);
    while holder.inspect(&name).await.expect("inspect").waiters == 0 {
        assert!(Instant::now() < deadline, "the waiter never queued");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // Parked by now: its first try placed the entry, and the park follows at once.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let released = Instant::now();
    let held = held.expect("free");
    held.release()
        .await
        .expect("a release whose ring is refused");
    let (guard, granted) = task.await.expect("waiter");
    guard.release().await.expect("release");
    let handoff = granted.saturating_duration_since(released);
    assert!(handoff < scaled_ms(2_500), "granted {handoff:?} after");
}
