//! MySQL and MariaDB waiters park a connection of their own while they wait, and a release
//! interrupts the first waiter's park (`KILL QUERY`): a handoff takes milliseconds and a
//! waiter sends nothing else while the lock stays held. Each test has a table of its own, so
//! that the parked statements it counts on the server are its own.

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, LockGuard};
use lock_sql::SqlLock;
use lock_testkit::scaled_ms;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A table name of its own for one test.
pub(crate) fn table(prefix: &str) -> String {
    format!("{prefix}_{:08x}", rand::random::<u32>())
}

/// A lock service on `url` using `table`.
pub(crate) async fn service(url: &str, table: &str) -> Arc<SqlLock> {
    let lock = SqlLock::builder(url).table(table).connect().await;
    Arc::new(lock.expect("connect"))
}

/// The server ids of the connections parked on `table`'s line now.
pub(crate) async fn parked(admin: &mut MySqlConnection, table: &str) -> Vec<u64> {
    let sql = "SELECT ID FROM information_schema.PROCESSLIST \
               WHERE ID <> CONNECTION_ID() AND INFO LIKE ? AND INFO LIKE '%distlock park%'";
    let rows: Vec<(i64,)> = sqlx::query_as(sql)
        .bind(format!("%{table}%"))
        .fetch_all(admin)
        .await
        .expect("read the process list");
    rows.into_iter()
        .map(|(id,)| u64::try_from(id).expect("a connection id"))
        .collect()
}

/// Waits until `count` connections are parked on `table`'s line; their ids.
pub(crate) async fn until_parked(
    admin: &mut MySqlConnection,
    table: &str,
    count: usize,
) -> Vec<u64> {
    let deadline = Instant::now() + scaled_ms(10_000);
    loop {
        let ids = parked(admin, table).await;
        if ids.len() == count {
            return ids;
        }
        assert!(Instant::now() < deadline, "{ids:?} parked, not {count}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// An acquisition of `name` on `lock` waiting up to 30 s, in a task: the guard and when it
/// was granted.
pub(crate) fn waiter(lock: &Arc<SqlLock>, name: &str) -> JoinHandle<(LockGuard, Instant)> {
    let (lock, name) = (Arc::clone(lock), name.to_owned());
    tokio::spawn(async move {
        let guard = lock.acquire_timeout(name.as_str(), scaled_ms(30_000)).await;
        (guard.expect("granted in time"), Instant::now())
    })
}

/// Releases `held` and waits for the parked `task` to be granted: how long the handoff took.
pub(crate) async fn hand_over(held: LockGuard, task: JoinHandle<(LockGuard, Instant)>) -> Duration {
    let released = Instant::now();
    held.release().await.expect("release");
    let (guard, granted) = task.await.expect("waiter");
    guard.release().await.expect("release");
    granted.saturating_duration_since(released)
}

async fn admin() -> Option<(String, MySqlConnection)> {
    let url = crate::url()?;
    let conn = MySqlConnection::connect(&url).await.expect("admin");
    Some((url, conn))
}

/// Two services on a table of their own, one to hold and one to wait, and a connection that
/// reads the process list.
struct Scene {
    url: String,
    admin: MySqlConnection,
    table: String,
    holder: Arc<SqlLock>,
    waiting: Arc<SqlLock>,
}

impl Scene {
    /// `None` when no MySQL/MariaDB server is configured.
    async fn new(prefix: &str) -> Option<Self> {
        let (url, admin) = admin().await?;
        let table = table(prefix);
        let (holder, waiting) = (service(&url, &table).await, service(&url, &table).await);
        Some(Self {
            url,
            admin,
            table,
            holder,
            waiting,
        })
    }

    /// The holder takes `name`, and the waiting service waits for it until its connection is
    /// parked: the hold and the waiter.
    async fn held_and_parked(
        &mut self,
        name: &str,
    ) -> (LockGuard, JoinHandle<(LockGuard, Instant)>) {
        let held = self.holder.try_acquire(name).await.expect("try");
        let task = waiter(&self.waiting, name);
        until_parked(&mut self.admin, &self.table, 1).await;
        (held.expect("free"), task)
    }

    /// Ends the connection `id` (`KILL CONNECTION`).
    async fn kill(&mut self, id: u64) {
        let kill = format!("KILL CONNECTION {id}");
        sqlx::raw_sql(AssertSqlSafe(kill))
            .execute(&mut self.admin)
            .await
            .expect("kill the connection");
    }
}

/// Each release right after the waiter parked: a park left to sleep out would hand over
/// after about a second. While the lock stays held past a whole park, the waiter sends no
/// acquire statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_rings_the_parked_first_waiter() {
    let Some(mut scene) = Scene::new("ring").await else {
        return;
    };
    for round in 0..4 {
        let (held, task) = scene.held_and_parked(&format!("ring-{round}")).await;
        if round == 0 {
            let before = scene.waiting.acquire_statements();
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            let sent = scene.waiting.acquire_statements() - before;
            assert_eq!(sent, 0, "a parked waiter sent {sent} tries in 1.5 s");
        }
        let handoff = hand_over(held, task).await;
        assert!(
            handoff < scaled_ms(300),
            "round {round}: granted {handoff:?} after the release"
        );
    }
}

/// A ring returns within milliseconds even when it reaches a park just as the park ends (its
/// time ran out, or an earlier ring woke it): parks of a millisecond each, rung 10000 times.
/// A release waits for its ring, and the rung waiter for the release: a slow ring is a slow
/// handoff. (Parked in `SLEEP()`, some of these rings took two seconds each.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_ring_that_meets_a_park_as_it_ends_returns_at_once() {
    let Some(scene) = Scene::new("meet").await else {
        return;
    };
    let lock = scene.holder;
    let held = lock.try_acquire("meet").await.expect("try").expect("free");
    let slowest = lock.slowest_ring("meet", 10_000).await.expect("rings");
    held.release().await.expect("release");
    let slowest = slowest.expect("MySQL and MariaDB park a connection");
    assert!(
        slowest < scaled_ms(500),
        "the slowest of 10000 rings took {slowest:?}"
    );
}

/// A parked connection that dies (killed here) costs the waiter only its wake-up: it still
/// follows the line and is granted after the release, and its next wait parks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_whose_parked_connection_dies_is_still_granted() {
    let Some(mut scene) = Scene::new("lost").await else {
        return;
    };
    let (held, task) = scene.held_and_parked("lost").await;
    let [sleeper] = until_parked(&mut scene.admin, &scene.table, 1).await[..] else {
        unreachable!("one parked")
    };
    scene.kill(sleeper).await;
    let handoff = hand_over(held, task).await;
    assert!(handoff < scaled_ms(3_000), "granted {handoff:?} after");
    let (held, task) = scene.held_and_parked("lost").await;
    let handoff = hand_over(held, task).await;
    assert!(handoff < scaled_ms(300), "parked again: {handoff:?}");
}

/// The connection holding the service's anchor (the user lock its parked connections wait
/// for) dies: the parked waiter then gets that lock instead of waiting. It gives its parked
/// connection up, reads the line until the lock is released, and is granted; the service's
/// next wait opens a new anchor, parks, and is rung.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_whose_anchor_dies_is_still_granted_and_parks_again() {
    let Some(mut scene) = Scene::new("anchor").await else {
        return;
    };
    let (held, task) = scene.held_and_parked("anchor").await;
    let anchor = scene.waiting.parking_anchor().expect("an anchor is open");
    scene.kill(anchor).await;
    until_parked(&mut scene.admin, &scene.table, 0).await;
    assert!(!task.is_finished(), "granted while the lock is held");
    let handoff = hand_over(held, task).await;
    assert!(handoff < scaled_ms(3_000), "granted {handoff:?} after");
    let (held, task) = scene.held_and_parked("anchor").await;
    let renewed = scene.waiting.parking_anchor().expect("a new anchor");
    assert_ne!(renewed, anchor, "the dead anchor is still in use");
    let handoff = hand_over(held, task).await;
    assert!(handoff < scaled_ms(300), "parked again: {handoff:?}");
}

/// A parked acquisition dropped mid-wait leaves no waiter entry, its parked statement ends
/// (its connection closed rather than reused mid-statement), and the service's next wait
/// parks and is rung as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dropped_parked_acquisition_leaves_nothing_behind() {
    let Some(mut scene) = Scene::new("drop").await else {
        return;
    };
    let (held, task) = scene.held_and_parked("drop").await;
    task.abort();
    assert!(task.await.is_err_and(|error| error.is_cancelled()));
    until_parked(&mut scene.admin, &scene.table, 0).await;
    let deadline = Instant::now() + scaled_ms(5_000);
    let name = lock_core::LockName::new("drop").expect("name");
    while scene.holder.inspect(&name).await.expect("inspect").waiters > 0 {
        assert!(
            Instant::now() < deadline,
            "the dropped waiter's entry stayed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let task = waiter(&scene.waiting, "drop");
    until_parked(&mut scene.admin, &scene.table, 1).await;
    let handoff = hand_over(held, task).await;
    assert!(handoff < scaled_ms(300), "the next wait: {handoff:?}");
}

/// The first waiter leaves (dropped here) while the lock is free and nobody rang the next:
/// the hold ended behind the holder's back (`sever`), as a lease that ran out would. The
/// next waiter, parked a moment ago for up to a second, is rung by the one leaving.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_leaving_a_free_lock_rings_the_next() {
    let Some(mut scene) = Scene::new("leave").await else {
        return;
    };
    let (held, leaving) = scene.held_and_parked("leave").await;
    let second = service(&scene.url, &scene.table).await;
    let next = waiter(&second, "leave");
    until_parked(&mut scene.admin, &scene.table, 2).await;
    assert!(
        scene.holder.sever("leave").await.expect("sever"),
        "nothing severed"
    );
    let left = Instant::now();
    leaving.abort();
    let (guard, granted) = next.await.expect("waiter");
    let handoff = granted.saturating_duration_since(left);
    assert!(handoff < scaled_ms(300), "granted {handoff:?} after");
    guard.release().await.expect("release");
    drop(held);
}

/// An operator's `force_release` rings the first waiter as a release does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_force_release_rings_the_parked_first_waiter() {
    let Some(mut scene) = Scene::new("force").await else {
        return;
    };
    let (held, task) = scene.held_and_parked("force").await;
    let name = lock_core::LockName::new("force").expect("name");
    let forced = Instant::now();
    let done = scene
        .holder
        .force_release(&name, held.fencing_token())
        .await;
    assert!(done.expect("force_release"), "nothing released");
    let (guard, granted) = task.await.expect("waiter");
    let handoff = granted.saturating_duration_since(forced);
    assert!(handoff < scaled_ms(300), "granted {handoff:?} after");
    guard.release().await.expect("release");
    drop(held);
}

/// On a server whose `GET_LOCK` waits whole seconds (MySQL), a park of less than a second
/// cannot be asked for: the end of a wait is waited on the client, so that a wait neither
/// parks again and again in its last fraction of a second nor outlasts its time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn whole_second_parks_neither_spin_nor_outlast_the_wait() {
    let Some(scene) = Scene::new("whole").await else {
        return;
    };
    assert!(scene.waiting.park_whole_seconds(), "a MySQL service parks");
    let held = scene.holder.try_acquire("whole").await.expect("try");
    let held = held.expect("free");
    for (wait_ms, most_parks) in [(450, 1), (700, 1), (2_500, 3)] {
        let parks = scene.waiting.parks_sent().expect("parks counted");
        let started = Instant::now();
        let wait = Duration::from_millis(wait_ms);
        let waited = scene.waiting.acquire_timeout("whole", wait).await;
        let took = started.elapsed();
        let error = waited.expect_err("acquired a held lock");
        assert_eq!(error.kind(), lock_core::ErrorKind::Timeout, "{error}");
        let sent = scene.waiting.parks_sent().expect("parks counted") - parks;
        assert!(
            sent <= most_parks,
            "a {wait_ms} ms wait parked {sent} times"
        );
        let late = took.saturating_sub(wait);
        assert!(late < scaled_ms(250), "a {wait_ms} ms wait took {took:?}");
    }
    held.release().await.expect("release");
}
