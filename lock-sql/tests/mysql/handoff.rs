//! MySQL and MariaDB releases grant the lock to the first waiter in line, on the terms its
//! entry carries, before that waiter acts: a waiter that leaves holding a grant it never took
//! up passes it on, and waiters that poll rather than park take their grants up too.

use std::time::Duration;

use lock_core::{DistributedLockExt, LockGuard};
use lock_testkit::scaled_ms;
use sqlx::{AssertSqlSafe, Connection, MySqlConnection};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::parking::{service, table, until_parked, waiter};

async fn admin() -> Option<(String, MySqlConnection)> {
    let url = crate::url()?;
    let conn = MySqlConnection::connect(&url).await.expect("admin");
    Some((url, conn))
}

/// The label and whether the lease runs, of `table`'s row `name`.
async fn holder(admin: &mut MySqlConnection, table: &str, name: &str) -> (Option<String>, bool) {
    let sql = format!(
        "SELECT owner_label, CAST(lease_end > UTC_TIMESTAMP(6) AS SIGNED) FROM `{table}` \
         WHERE name = ?"
    );
    let (label, live): (Option<Vec<u8>>, i64) = sqlx::query_as(AssertSqlSafe(sql))
        .bind(name.as_bytes())
        .fetch_one(admin)
        .await
        .expect("read the row");
    let label = label.map(|label| String::from_utf8(label).expect("UTF-8 label"));
    (label, live == 1)
}

/// The release itself grants: an entry placed by hand, with no process behind it to act,
/// holds the lock the moment the release returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_grants_the_first_waiter_before_it_acts() {
    let Some((url, mut admin)) = admin().await else {
        return;
    };
    let table = table("grant");
    let lock = service(&url, &table).await;
    let held = lock
        .try_acquire("granted")
        .await
        .expect("try")
        .expect("free");
    let mark = format!(
        "UPDATE `{table}` SET queued_until = UTC_TIMESTAMP(6) + INTERVAL 60 SECOND \
         WHERE name = 'granted'"
    );
    let place = format!(
        "INSERT INTO `{table}_waiters` (name, waiter, expires_at, queued_at, sleeper, \
                                        grant_owner, grant_lease_us, grant_label) \
         VALUES ('granted', REPEAT('w', 16), UTC_TIMESTAMP(6) + INTERVAL 60 SECOND, \
                 UTC_TIMESTAMP(6), NULL, REPEAT('o', 16), 60000000, 'first-waiter')"
    );
    for sql in [mark, place] {
        sqlx::raw_sql(AssertSqlSafe(sql))
            .execute(&mut admin)
            .await
            .expect("place a waiter by hand");
    }
    held.release().await.expect("release");
    let (label, live) = holder(&mut admin, &table, "granted").await;
    assert_eq!(
        label.as_deref(),
        Some("first-waiter"),
        "the release did not grant the first waiter"
    );
    assert!(live, "the grant's lease does not run");
}

/// Grants `name` of `table` to its first waiter as a release would, without ringing it.
async fn grant_unrung(admin: &mut MySqlConnection, table: &str, name: &str) {
    let grant = include_str!("../../sql/mysql/grant_head.sql")
        .replace("{table}", table)
        .replace("{waiters}", &format!("{table}_waiters"));
    let done = sqlx::query(AssertSqlSafe(grant))
        .bind(name)
        .bind(None::<Vec<u8>>)
        .bind(name)
        .execute(&mut *admin)
        .await
        .expect("grant_head.sql");
    assert_eq!(done.rows_affected(), 1, "nothing granted");
    let (label, live) = holder(admin, table, name).await;
    assert!(live, "granted to {label:?} with no lease");
}

/// Two services on a table of their own: one held `name` and the other waits for it, parked,
/// and the hold ended behind the holder's back. The admin connection, the table, the
/// holding service's guard and the waiter.
async fn parked_behind_a_severed_hold(
    name: &str,
) -> Option<(
    MySqlConnection,
    String,
    LockGuard,
    JoinHandle<(LockGuard, Instant)>,
)> {
    let (url, mut admin) = admin().await?;
    let table = table(name);
    let (holding, waiting) = (service(&url, &table).await, service(&url, &table).await);
    let held = holding.try_acquire(name).await.expect("try").expect("free");
    let task = waiter(&waiting, name);
    until_parked(&mut admin, &table, 1).await;
    assert!(holding.sever(name).await.expect("sever"), "nothing severed");
    Some((admin, table, held, task))
}

/// A waiter granted the lock while its park sleeps (a release whose ring did not reach it)
/// takes the grant up when its park ends, within a second, though the last holder's lease,
/// which it read before parking, runs for longer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_granted_without_a_ring_takes_the_grant_up() {
    let Some((mut admin, table, held, task)) = parked_behind_a_severed_hold("unrung").await else {
        return;
    };
    let granted = Instant::now();
    grant_unrung(&mut admin, &table, "unrung").await;
    let (guard, taken) = task.await.expect("waiter");
    let took = taken.saturating_duration_since(granted);
    assert!(
        took < scaled_ms(2_000),
        "the grant was taken up after {took:?}"
    );
    guard.release().await.expect("release");
    drop(held);
}

/// A waiter granted the lock while its park sleeps, dropped before it takes the grant up:
/// leaving the line releases the grant, so the next acquisition gets the lock at once rather
/// than after the grant's lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiter_that_leaves_with_a_grant_passes_it_on() {
    let Some((mut admin, table, held, task)) = parked_behind_a_severed_hold("pass").await else {
        return;
    };
    grant_unrung(&mut admin, &table, "pass").await;
    task.abort();
    let _ = task.await;
    let deadline = Instant::now() + scaled_ms(5_000);
    let url = crate::url().expect("a server");
    let next = service(&url, &table).await;
    loop {
        if let Some(guard) = next.try_acquire("pass").await.expect("try") {
            guard.release().await.expect("release");
            break;
        }
        let (label, _) = holder(&mut admin, &table, "pass").await;
        assert!(
            Instant::now() < deadline,
            "the grant was not passed on: held by {label:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(held);
}

/// More waiters than one service parks: those beyond read their place in line, and find a
/// grant made to them as their turn. Each is granted in order within seconds; a grant left
/// unnoticed would stand until its 30 s lease ran out.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiters_beyond_the_parked_ones_take_their_grants_up() {
    let Some((url, _admin)) = admin().await else {
        return;
    };
    let table = table("beyond");
    let (holding, waiting) = (service(&url, &table).await, service(&url, &table).await);
    let held = holding
        .try_acquire("beyond")
        .await
        .expect("try")
        .expect("free");
    let took = crate::support::turns::take_turns(&holding, held, &[waiting], 20).await;
    assert!(took < scaled_ms(15_000), "20 handoffs took {took:?}");
}
