//! The conformance suite and the SQL cases on a real MariaDB server.

mod support;

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

/// The acquire statement grants exactly when the row is new, free or expired, and increments
/// the fence and records the holder's label and grant time exactly then, whether the server
/// evaluates `ON DUPLICATE KEY UPDATE` assignments left to right (the default) or all against
/// the old row (MariaDB's SIMULTANEOUS_ASSIGNMENT).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acquire_statement_is_right_in_both_assignment_orders() {
    use sqlx::Connection;
    let Some(url) = url() else { return };
    let table = format!("assign_{:08x}", rand::random::<u32>());
    let fill = |sql: &str| {
        sql.replace("{table}", &table)
            .replace("{waiters}", &format!("{table}_waiters"))
    };
    let acquire = fill(include_str!("../sql/mysql/acquire.sql"));
    let schema = fill(include_str!("../sql/mysql/schema.sql"));
    let release = fill(include_str!("../sql/mysql/release.sql"));
    for simultaneous in [false, true] {
        let mut conn = sqlx::MySqlConnection::connect(&url).await.expect("connect");
        if simultaneous {
            let mode = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',SIMULTANEOUS_ASSIGNMENT')";
            sqlx::query(mode)
                .execute(&mut conn)
                .await
                .expect("sql_mode");
        }
        // Statements end with `;` at the end of a line, as the schema step splits them.
        for create in schema.split(";\n").filter(|text| !text.trim().is_empty()) {
            sqlx::query(sqlx::AssertSqlSafe(create.to_owned()))
                .execute(&mut conn)
                .await
                .expect("schema");
        }
        let name = format!("order-{simultaneous}");
        let mut attempt = async |owner: u8, lease_us: i64| {
            let (token, label) = ([owner; 16], format!("holder-{owner}"));
            let label = label.as_bytes();
            let reported = sqlx::query(sqlx::AssertSqlSafe(acquire.clone()))
                .bind(name.as_bytes())
                .bind(&token[..])
                .bind(lease_us)
                .bind(label)
                .bind(&[0xEE_u8; 16][..])
                .bind(name.as_bytes())
                .bind(&token[..])
                .bind(&token[..])
                .bind(&token[..])
                .bind(lease_us)
                .bind(&token[..])
                .bind(label)
                .bind(&token[..])
                .execute(&mut conn)
                .await
                .expect("acquire statement")
                .last_insert_id();
            let row: (i64, Vec<u8>, Vec<u8>, i64) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT fence, owner, owner_label, \
                 TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', granted_at) \
                 FROM `{table}` WHERE name = ?"
            )))
            .bind(name.as_bytes())
            .fetch_one(&mut conn)
            .await
            .expect("read row");
            let holder = String::from_utf8(row.2).expect("UTF-8 label");
            let ours = row.1 == token;
            // The statement's insert id: the fence when granted, else 2^63 + the lease left
            // (every refused try below asks for the lease its holder was granted).
            if ours {
                assert_eq!(reported, row.0 as u64, "a grant reported another fence");
            } else {
                let left = reported
                    .checked_sub(1 << 63)
                    .expect("a refusal reported a fence");
                assert!(
                    (1..=lease_us as u64).contains(&left),
                    "a refusal reported {left} us left of a {lease_us} us lease"
                );
            }
            ((row.0, ours), (holder, row.3))
        };
        let ((first, ours), (label, granted)) = attempt(1, 300_000).await;
        assert!(ours && first > 0, "fresh row not granted");
        assert_eq!(label, "holder-1", "the grant did not record its label");
        let (kept, shown) = attempt(2, 300_000).await;
        assert_eq!(kept, (first, false), "live lease taken over");
        assert_eq!(
            shown,
            (label, granted),
            "a refused try changed the label or time"
        );
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let ((second, ours), (label, regranted)) = attempt(3, 60_000_000).await;
        assert!(
            ours && second > first,
            "expired lease not taken over ({first} -> {second})"
        );
        assert_eq!(label, "holder-3", "the takeover did not record its label");
        assert!(regranted > granted, "the takeover kept the old grant time");
        let (kept, shown) = attempt(4, 60_000_000).await;
        assert_eq!(kept, (second, false), "live lease taken over");
        assert_eq!(
            shown,
            (label, regranted),
            "a refused try changed the label or time"
        );
        let mut conn = sqlx::MySqlConnection::connect(&url).await.expect("connect");
        let released = sqlx::query(sqlx::AssertSqlSafe(release.clone()))
            .bind(name.as_bytes())
            .bind(&[3_u8; 16][..])
            .execute(&mut conn)
            .await
            .expect("release");
        assert_eq!(released.rows_affected(), 1);
        drop(conn);
        let mut conn = sqlx::MySqlConnection::connect(&url).await.expect("connect");
        if simultaneous {
            let mode = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',SIMULTANEOUS_ASSIGNMENT')";
            sqlx::query(mode)
                .execute(&mut conn)
                .await
                .expect("sql_mode");
        }
        let token = [5_u8; 16];
        sqlx::query(sqlx::AssertSqlSafe(acquire.clone()))
            .bind(name.as_bytes())
            .bind(&token[..])
            .bind(60_000_000_i64)
            .bind(&b"holder-5"[..])
            .bind(&[0xEE_u8; 16][..])
            .bind(name.as_bytes())
            .bind(&token[..])
            .bind(&token[..])
            .bind(&token[..])
            .bind(60_000_000_i64)
            .bind(&token[..])
            .bind(&b"holder-5"[..])
            .bind(&token[..])
            .execute(&mut conn)
            .await
            .expect("acquire after release");
        let fence: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT fence FROM `{table}` WHERE name = ? AND owner = ?"
        )))
        .bind(name.as_bytes())
        .bind(&token[..])
        .fetch_one(&mut conn)
        .await
        .expect("released row not taken over");
        assert!(
            fence > second,
            "token after release {fence} not above {second}"
        );
    }
}
