//! SQL-specific cases for what operators see: tables made by the first schema gain the new
//! columns, the waiters table's entries come and go as acquisitions wait, and `list` takes
//! its prefix literally.

use std::time::{Duration, SystemTime};

use lock_core::{AcquireOptions, DistributedLock, DistributedLockExt, LockName};
use lock_sql::{SqlLock, sqlx};
use lock_testkit::scaled_ms;

use super::{Admin, SqlTarget, unique};

/// The lock table as the first schema made it, before owner labels and grant times.
const FIRST_SCHEMA: [&str; 3] = [
    "CREATE TABLE {t} (name TEXT NOT NULL PRIMARY KEY, owner BYTEA, fence BIGINT NOT NULL, \
     lease_end TIMESTAMPTZ NOT NULL)",
    "CREATE TABLE {t} (name VARBINARY(255) NOT NULL PRIMARY KEY, owner BINARY(16) NULL, \
     fence BIGINT NOT NULL, lease_end DATETIME(6) NOT NULL) ENGINE = InnoDB",
    "CREATE TABLE {t} (name TEXT NOT NULL PRIMARY KEY, owner BLOB, fence INTEGER NOT NULL, \
     lease_end INTEGER NOT NULL)",
];

/// A live hold as the first version wrote it: no label, no grant time, a minute left.
const FIRST_HOLD: [&str; 3] = [
    "INSERT INTO {t} (name, owner, fence, lease_end) \
     VALUES ($1, $2, 5, now() + INTERVAL '60 seconds')",
    "INSERT INTO {t} (name, owner, fence, lease_end) \
     VALUES (?, ?, 5, UTC_TIMESTAMP(6) + INTERVAL 60 SECOND)",
    "INSERT INTO {t} (name, owner, fence, lease_end) \
     VALUES (?1, ?2, 5, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) + 60000)",
];

/// A waiter entry of a process that died waiting: it expired a second ago.
const DEAD_WAITER: [&str; 3] = [
    "INSERT INTO {t} (name, waiter, expires_at) VALUES ($1, $2, now() - INTERVAL '1 second')",
    "INSERT INTO {t} (name, waiter, expires_at) \
     VALUES (?, ?, UTC_TIMESTAMP(6) - INTERVAL 1 SECOND)",
    "INSERT INTO {t} (name, waiter, expires_at) \
     VALUES (?1, ?2, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) - 1000)",
];

/// The waiters table as versions before places in line made it.
const FIRST_WAITERS: [&str; 3] = [
    "CREATE TABLE {t} (name TEXT NOT NULL, waiter BYTEA NOT NULL, \
     expires_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (name, waiter))",
    "CREATE TABLE {t} (name VARBINARY(255) NOT NULL, waiter BINARY(16) NOT NULL, \
     expires_at DATETIME(6) NOT NULL, PRIMARY KEY (name, waiter)) ENGINE = InnoDB",
    "CREATE TABLE {t} (name TEXT NOT NULL, waiter BLOB NOT NULL, \
     expires_at INTEGER NOT NULL, PRIMARY KEY (name, waiter))",
];

/// A waiter entry of another process, live for a minute.
const LIVE_WAITER: [&str; 3] = [
    "INSERT INTO {t} (name, waiter, expires_at) VALUES ($1, $2, now() + INTERVAL '1 minute')",
    "INSERT INTO {t} (name, waiter, expires_at) \
     VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE)",
    "INSERT INTO {t} (name, waiter, expires_at) \
     VALUES (?1, ?2, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) + 60000)",
];

const CLEAR_WAITERS: [&str; 3] = ["DELETE FROM {t}", "DELETE FROM {t}", "DELETE FROM {t}"];

const COUNT_WAITERS: [&str; 3] = [
    "SELECT count(*) FROM {t} WHERE name = $1",
    "SELECT COUNT(*) FROM {t} WHERE name = ?",
    "SELECT count(*) FROM {t} WHERE name = ?1",
];

impl Admin {
    /// Runs the statement of this dialect among `sql` on table `table`, binding `name` and
    /// `bytes` if given.
    async fn run(&self, sql: [&str; 3], table: &str, binds: Option<(&str, &[u8])>) {
        let text = |i: usize| sqlx::AssertSqlSafe(sql[i].replace("{t}", table));
        let done = match (self, binds) {
            (Admin::Postgres(pool), None) => sqlx::query(text(0)).execute(pool).await.map(drop),
            (Admin::Postgres(pool), Some((name, bytes))) => {
                let query = sqlx::query(text(0)).bind(name).bind(bytes);
                query.execute(pool).await.map(drop)
            }
            (Admin::MySql(pool), None) => sqlx::query(text(1)).execute(pool).await.map(drop),
            (Admin::MySql(pool), Some((name, bytes))) => {
                let query = sqlx::query(text(1)).bind(name.as_bytes()).bind(bytes);
                query.execute(pool).await.map(drop)
            }
            (Admin::Sqlite(pool), None) => sqlx::query(text(2)).execute(pool).await.map(drop),
            (Admin::Sqlite(pool), Some((name, bytes))) => {
                let query = sqlx::query(text(2)).bind(name).bind(bytes);
                query.execute(pool).await.map(drop)
            }
        };
        done.unwrap_or_else(|error| panic!("{}: {error}", sql[0]));
    }

    /// Every entry of `name` in the default waiters table, expired or not.
    async fn waiter_rows(&self, name: &LockName) -> i64 {
        let text = |i: usize| {
            sqlx::AssertSqlSafe(COUNT_WAITERS[i].replace("{t}", "distlock_locks_waiters"))
        };
        let counted = match self {
            Admin::Postgres(pool) => {
                sqlx::query_scalar(text(0))
                    .bind(name.as_str())
                    .fetch_one(pool)
                    .await
            }
            Admin::MySql(pool) => {
                sqlx::query_scalar(text(1))
                    .bind(name.as_str().as_bytes())
                    .fetch_one(pool)
                    .await
            }
            Admin::Sqlite(pool) => {
                sqlx::query_scalar(text(2))
                    .bind(name.as_str())
                    .fetch_one(pool)
                    .await
            }
        };
        counted.expect("count waiter entries")
    }
}

/// A lock table made by the first schema (no label, no grant time) gains the new columns when
/// a service connects: a hold taken before shows with an empty label and no grant time, and
/// new holds record both. Connecting again changes nothing.
pub(crate) async fn tables_from_the_first_schema_gain_the_new_columns(target: &SqlTarget) {
    let admin = target.admin().await;
    let table = format!("first_{:08x}", rand::random::<u32>());
    admin.run(FIRST_SCHEMA, &table, None).await;
    let old = unique("upgrade/old");
    admin
        .run(FIRST_HOLD, &table, Some((old.as_str(), &[7; 16])))
        .await;
    let connect = || SqlLock::builder(&target.url).table(&table).connect();
    let lock = connect().await.expect("connect upgrades the table");
    let status = lock.inspect(&old).await.expect("inspect the old hold");
    let holder = status.holders.first().expect("the old hold shows");
    assert_eq!(holder.fencing_token, 5, "{status:?}");
    assert_eq!((holder.owner_label.as_str(), holder.granted_at), ("", None));
    assert!(
        holder
            .lease_left
            .is_some_and(|left| left > Duration::from_secs(30))
    );
    let new = unique("upgrade/new");
    let labelled = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .owner_label("after-upgrade")
        .build()
        .expect("options");
    let before = SystemTime::now() - Duration::from_secs(5);
    let guard = lock.acquire_with(&new, &labelled).await.expect("acquire");
    let guard = guard.expect("a free name");
    let again = connect().await.expect("connect to an upgraded table");
    let status = again.inspect(&new).await.expect("inspect");
    let holder = status.holders.first().expect("the new hold shows");
    assert_eq!(holder.owner_label, "after-upgrade", "{status:?}");
    assert!(
        holder.granted_at.is_some_and(|at| at > before),
        "{status:?}"
    );
    guard.release().await.expect("release");
}

/// A waiters table made before entries kept their place in line gains `queued_at` when a
/// service connects, and an entry already in it stays ahead of newcomers.
pub(crate) async fn waiters_tables_without_places_in_line_gain_them(target: &SqlTarget) {
    let admin = target.admin().await;
    let table = format!("line_{:08x}", rand::random::<u32>());
    let waiters = format!("{table}_waiters");
    admin.run(FIRST_SCHEMA, &table, None).await;
    admin.run(FIRST_WAITERS, &waiters, None).await;
    let name = unique("upgrade/line");
    let entry = Some((name.as_str(), &[9_u8; 16][..]));
    admin.run(LIVE_WAITER, &waiters, entry).await;
    let lock = SqlLock::builder(&target.url).table(&table).connect();
    let lock = lock.await.expect("connect");
    let barged = lock
        .try_acquire(&name)
        .await
        .expect("try upgrades the tables");
    assert!(
        barged.is_none(),
        "a newcomer barged ahead of an entry placed before the upgrade"
    );
    admin.run(CLEAR_WAITERS, &waiters, None).await;
    let granted = lock.try_acquire(&name).await.expect("try");
    let granted = granted.expect("free once the entry is gone");
    granted.release().await.expect("release");
}

/// Only an acquisition that waits keeps a waiter entry: a failed single try leaves none, a
/// waiter's entry goes when it is granted, and one that gives up takes the expired entries of
/// its name (a process that died waiting) with it; expired entries are never counted.
pub(crate) async fn waiter_entries_come_and_go_with_waiting(target: &SqlTarget) {
    let (holder, other) = (target.lock().await, target.lock().await);
    let admin = target.admin().await;
    let name = unique("waiters");
    let held = holder
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("hold");
    assert!(other.try_acquire(&name).await.expect("try").is_none());
    assert_eq!(
        admin.waiter_rows(&name).await,
        0,
        "a single try left an entry"
    );

    let dead = Some((name.as_str(), &[9_u8; 16][..]));
    admin.run(DEAD_WAITER, "distlock_locks_waiters", dead).await;
    assert_eq!(other.inspect(&name).await.expect("inspect").waiters, 0);
    let gave_up = other.acquire_timeout(&name, scaled_ms(300)).await;
    assert!(gave_up.is_err(), "the wait should have timed out");
    assert_eq!(
        admin.waiter_rows(&name).await,
        0,
        "entries left after giving up"
    );

    let waiting = {
        let (other, name) = (other.clone(), name.clone());
        tokio::spawn(async move { other.acquire_timeout(&name, scaled_ms(10_000)).await })
    };
    let deadline = tokio::time::Instant::now() + scaled_ms(5000);
    while other.inspect(&name).await.expect("inspect").waiters != 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the waiter never showed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    held.release().await.expect("release");
    let granted = waiting
        .await
        .expect("waiter task")
        .expect("granted after the release");
    assert_eq!(
        admin.waiter_rows(&name).await,
        0,
        "the granted waiter kept its entry"
    );
    granted.release().await.expect("release");
}

/// `list` takes its prefix literally: LIKE's wildcards and escape character match only
/// themselves, and letters only their own case.
pub(crate) async fn list_takes_the_prefix_literally(target: &SqlTarget) {
    let lock = target.lock().await;
    let base = format!("sql-test/like-{:016x}/", rand::random::<u64>());
    let named = |tail: &str| LockName::new(format!("{base}{tail}")).expect("valid name");
    let all = ["w%x", "w_x", "w!x", "wax", "WAX"].map(named);
    let mut guards = Vec::new();
    for name in &all {
        guards.push(
            lock.acquire_timeout(name, scaled_ms(5000))
                .await
                .expect("hold"),
        );
    }
    for (prefix, expected) in [("w%", 0), ("w_", 1), ("w!", 2), ("wa", 3), ("WA", 4)] {
        let listed = lock.list(&format!("{base}{prefix}")).await.expect("list");
        assert_eq!(listed, vec![all[expected].clone()], "prefix {prefix:?}");
    }
    let everything = lock.list(&base).await.expect("list");
    let mut sorted = all.to_vec();
    sorted.sort();
    assert_eq!(everything, sorted);
    for guard in guards {
        guard.release().await.expect("release");
    }
}
