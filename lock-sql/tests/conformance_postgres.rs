//! The conformance suite and the SQL cases on a real PostgreSQL server, plus LISTEN/NOTIFY
//! waiting and a holder process killed with SIGKILL.

mod support;

#[path = "postgres/arrival_race.rs"]
mod arrival_race;
#[path = "postgres/blocking.rs"]
mod blocking;
#[path = "postgres/fairness.rs"]
mod fairness;
#[path = "postgres/handoff.rs"]
mod handoff;
#[path = "postgres/known_row.rs"]
mod known_row;
#[path = "postgres/leaving.rs"]
mod leaving;
#[path = "postgres/quiet_release.rs"]
mod quiet_release;
#[path = "postgres/refresh_race.rs"]
mod refresh_race;
#[path = "postgres/release_choice.rs"]
mod release_choice;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lock_core::{AcquireOptions, Backoff, DistributedLockExt};
use lock_sql::SqlLock;
use lock_testkit::servers::{PostgresServer, external_url};
use lock_testkit::{ConformanceTarget, require, scaled_ms};
use support::{SqlTarget, unique};
use tokio::time::Instant;

/// One server for the whole test binary (or `LOCK_TEST_POSTGRES_URL`); `None` skips.
fn url() -> Option<String> {
    static SERVER: OnceLock<Option<(Option<PostgresServer>, String)>> = OnceLock::new();
    let server = SERVER.get_or_init(|| match external_url("POSTGRES") {
        Some(url) => Some((None, url)),
        None => require(PostgresServer::start()).map(|server| {
            let url = server.url();
            (Some(server), url)
        }),
    });
    server.as_ref().map(|(_, url)| url.clone())
}

async fn postgres() -> Option<Arc<dyn ConformanceTarget>> {
    url().map(SqlTarget::shared)
}

fn target() -> Option<SqlTarget> {
    url().map(SqlTarget::plain)
}

lock_testkit::conformance_tests!(postgres());

support::sql_cases!(target());

/// Ten waiters on one service share one listening connection, and a release wakes them at
/// once although their backoff alone would sleep 30 s and the holder's lease has 30 s left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn notify_wakes_waiters_through_one_listener() {
    let Some(url) = url() else { return };
    let app = format!("notify_{:08x}", rand::random::<u32>());
    let lock = SqlLock::builder(&format!("{url}?application_name={app}"))
        .connect()
        .await
        .expect("connect");
    let holder = SqlLock::builder(&url).connect().await.expect("connect");
    let names: Vec<_> = (0..10).map(|i| unique(&format!("notify/{i}"))).collect();
    let mut held = Vec::new();
    for name in &names {
        held.push(
            holder
                .acquire_timeout(name, scaled_ms(5000))
                .await
                .expect("hold"),
        );
    }
    let slow = AcquireOptions::builder()
        .wait(scaled_ms(20_000))
        .backoff(
            Backoff::exponential(Duration::from_secs(30), Duration::from_secs(30))
                .expect("backoff"),
        )
        .build()
        .expect("options");
    let waiters: Vec<_> = names
        .iter()
        .map(|name| {
            let (lock, name, slow) = (lock.clone(), name.clone(), slow.clone());
            tokio::spawn(async move {
                let guard = lock.acquire_with_options(&name, &slow).await.expect("wait");
                (Instant::now(), guard.expect("waiter gave up"))
            })
        })
        .collect();
    tokio::time::sleep(scaled_ms(1000)).await;
    let listeners: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'",
    )
    .bind(&app)
    .fetch_one(&sqlx::PgPool::connect(&url).await.expect("admin pool"))
    .await
    .expect("count listeners");
    assert_eq!(
        listeners, 1,
        "expected one listening connection for ten waiters"
    );
    let released_at = Instant::now();
    for guard in held {
        guard.release().await.expect("release");
    }
    for waiter in waiters {
        let (acquired_at, guard) = waiter.await.expect("waiter task");
        let handoff = acquired_at - released_at;
        assert!(
            handoff < scaled_ms(1500),
            "woken {handoff:?} after the release"
        );
        guard.release().await.expect("release");
    }
}

/// Connect futures dropped at random points leave no connection open on the server (the
/// listener and pool go with them), and `ensure_schema` and `sever` cut short can simply be
/// called again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancelled_connects_leave_no_connections_behind() {
    let Some(url) = url() else { return };
    let app = format!("cancel_{:08x}", rand::random::<u32>());
    let tagged = format!("{url}?application_name={app}");
    let admin = sqlx::PgPool::connect(&url).await.expect("admin pool");
    let mut dropped = 0;
    for round in 0..40 {
        let cut = Duration::from_micros(rand::random_range(0..(200 * (round + 1))));
        match tokio::time::timeout(cut, SqlLock::builder(&tagged).connect()).await {
            Ok(lock) => drop(lock.expect("connect")),
            Err(_) => dropped += 1,
        }
    }
    assert!(dropped >= 10, "only {dropped} connects were cut short");
    let deadline = Instant::now() + scaled_ms(10_000);
    loop {
        let open: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
                .bind(&app)
                .fetch_one(&admin)
                .await
                .expect("count connections");
        if open == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{open} connections left open");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let lock = SqlLock::builder(&url).connect().await.expect("connect");
    let name = unique("cancel_admin");
    let _ = tokio::time::timeout(Duration::from_micros(50), lock.ensure_schema()).await;
    lock.ensure_schema()
        .await
        .expect("ensure_schema after a cancelled one");
    let guard = lock
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let _ = tokio::time::timeout(Duration::from_micros(50), lock.sever(&name)).await;
    lock.sever(&name)
        .await
        .expect("sever after a cancelled one");
    let again = lock
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire after sever");
    assert!(again.fencing_token() > guard.fencing_token());
    again.release().await.expect("release");
}

support::gathered_renewal_cases!(url());
