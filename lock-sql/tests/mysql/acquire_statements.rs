//! MySQL's acquire statements sent by hand on a scratch table: `acquire.sql`, which never
//! reads the waiters table, its `UPDATE` twin `acquire_row.sql` for rows that exist, and
//! `acquire_in_line.sql`, which serves the line; in both orders a server may evaluate
//! assignments, and with the mark (`wait_mark.sql`) that hands a free row from the first two
//! to the third.

use std::time::Duration;

use sqlx::{AssertSqlSafe, Connection, MySqlConnection};

/// An acquire statement's insert id when it refused a free row.
const FREE_BUT_REFUSED: u64 = 1 << 63;

/// An owner token as the lock row holds it: `None` when free.
type Token = Option<Vec<u8>>;

/// A lock row as [`Scratch::row`] reads it: fence, owner, label, grant time.
type Row = (i64, Token, String, i64);

/// The statements of one scratch table.
struct Scratch {
    table: String,
    acquire: String,
    row: String,
    in_line: String,
    release: String,
    mark: String,
    register: String,
}

/// Creates a scratch table named after `prefix` and its waiters and claims tables on
/// `conn`: the lock table's name, and what fills a statement's table names in.
pub(crate) async fn scratch_tables(
    conn: &mut MySqlConnection,
    prefix: &str,
) -> (String, impl Fn(&str) -> String + use<>) {
    let table = format!("{prefix}_{:08x}", rand::random::<u32>());
    let named = table.clone();
    let fill = move |sql: &str| {
        sql.replace("{table}", &named)
            .replace("{waiters}", &format!("{named}_waiters"))
            .replace("{claims}", &format!("{named}_claims"))
    };
    let schema = fill(include_str!("../../sql/mysql/schema.sql"));
    // Statements end with `;` at the end of a line, as the schema step splits them.
    for create in schema.split(";\n").filter(|text| !text.trim().is_empty()) {
        sqlx::query(AssertSqlSafe(create.to_owned()))
            .execute(&mut *conn)
            .await
            .expect("schema");
    }
    (table, fill)
}

impl Scratch {
    /// Creates the tables on `conn`.
    async fn new(conn: &mut MySqlConnection, prefix: &str) -> Self {
        let (table, fill) = scratch_tables(conn, prefix).await;
        Self {
            acquire: fill(include_str!("../../sql/mysql/acquire.sql")),
            row: fill(include_str!("../../sql/mysql/acquire_row.sql")),
            in_line: fill(include_str!("../../sql/mysql/acquire_in_line.sql")),
            release: fill(include_str!("../../sql/mysql/release.sql")),
            mark: fill(include_str!("../../sql/mysql/wait_mark.sql")),
            register: fill(include_str!("../../sql/mysql/wait_register.sql")),
            table,
        }
    }

    /// Sends `acquire.sql`, or `acquire_in_line.sql` for the acquisition whose waiter entry
    /// is `waiter` when given, for owner token `[owner; 16]` labelled `holder-{owner}`; the
    /// insert id it reported.
    async fn acquire(
        &self,
        conn: &mut MySqlConnection,
        name: &str,
        (owner, lease_us): (u8, i64),
        waiter: Option<[u8; 16]>,
    ) -> u64 {
        let (token, label) = (vec![owner; 16], format!("holder-{owner}").into_bytes());
        let name = name.as_bytes().to_vec();
        let text = if waiter.is_some() {
            &self.in_line
        } else {
            &self.acquire
        };
        let mut query = sqlx::query(AssertSqlSafe(text.clone()))
            .bind(name.clone())
            .bind(token.clone())
            .bind(lease_us)
            .bind(label.clone());
        if let Some(waiter) = waiter {
            query = query.bind(waiter.to_vec()).bind(name);
        }
        let query = query
            .bind(token.clone())
            .bind(token.clone())
            .bind(token.clone())
            .bind(lease_us)
            .bind(token.clone())
            .bind(label)
            .bind(token);
        let done = query.execute(conn).await.expect("acquire statement");
        done.last_insert_id()
    }

    /// Sends `acquire_row.sql` for owner token `[owner; 16]` labelled `holder-{owner}`: the
    /// rows it matched and the insert id it reported.
    async fn take(
        &self,
        conn: &mut MySqlConnection,
        name: &str,
        (owner, lease_us): (u8, i64),
    ) -> (u64, u64) {
        let token = vec![owner; 16];
        let done = sqlx::query(AssertSqlSafe(self.row.clone()))
            .bind(token.clone())
            .bind(lease_us)
            .bind(format!("holder-{owner}").into_bytes())
            .bind(name.as_bytes())
            .bind(token)
            .execute(conn)
            .await
            .expect("acquire_row.sql");
        (done.rows_affected(), done.last_insert_id())
    }

    async fn release(&self, conn: &mut MySqlConnection, name: &str, owner: u8) -> u64 {
        let query = sqlx::query(AssertSqlSafe(self.release.clone()))
            .bind(name.as_bytes())
            .bind(vec![owner; 16]);
        query.execute(conn).await.expect("release").rows_affected()
    }

    /// The row's fence, owner, label and grant time (in microseconds).
    async fn row(&self, conn: &mut MySqlConnection, name: &str) -> Row {
        let (fence, owner, label, granted): (i64, Token, Option<Vec<u8>>, Option<i64>) =
            sqlx::query_as(AssertSqlSafe(format!(
                "SELECT fence, owner, owner_label, \
                 TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', granted_at) \
                 FROM `{}` WHERE name = ?",
                self.table
            )))
            .bind(name.as_bytes())
            .fetch_one(conn)
            .await
            .expect("read row");
        let label = String::from_utf8(label.unwrap_or_default()).expect("UTF-8 label");
        (fence, owner, label, granted.unwrap_or(0))
    }
}

pub(crate) async fn connect(simultaneous: bool) -> Option<MySqlConnection> {
    let url = super::url()?;
    let mut conn = MySqlConnection::connect(&url).await.expect("connect");
    if simultaneous {
        let mode = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',SIMULTANEOUS_ASSIGNMENT')";
        sqlx::query(mode)
            .execute(&mut conn)
            .await
            .expect("sql_mode");
    }
    Some(conn)
}

/// Each acquire statement grants exactly when the row is new, free or expired, and
/// increments the fence and records the holder's label and grant time exactly then, whether
/// the server evaluates `ON DUPLICATE KEY UPDATE` assignments left to right (the default) or
/// all against the old row (MariaDB's SIMULTANEOUS_ASSIGNMENT). A refusal reports the lease
/// left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acquire_statements_are_right_in_both_assignment_orders() {
    for in_line in [None, Some([0xEE_u8; 16])] {
        for simultaneous in [false, true] {
            let Some(mut conn) = connect(simultaneous).await else {
                return;
            };
            let scratch = Scratch::new(&mut conn, "assign").await;
            let case = format!("in line {}, simultaneous {simultaneous}", in_line.is_some());
            let name = "order";
            let mut attempt = async |owner: u8, lease_us: i64| {
                let reported = scratch
                    .acquire(&mut conn, name, (owner, lease_us), in_line)
                    .await;
                let (fence, holder, label, granted) = scratch.row(&mut conn, name).await;
                let ours = holder == Some(vec![owner; 16]);
                if ours {
                    assert_eq!(
                        reported, fence as u64,
                        "a grant reported another fence: {case}"
                    );
                } else {
                    let left = reported.checked_sub(FREE_BUT_REFUSED);
                    let left = left.unwrap_or_else(|| panic!("a refusal reported a fence: {case}"));
                    assert!(
                        (1..=lease_us as u64).contains(&left),
                        "a refusal reported {left} us left of a {lease_us} us lease: {case}"
                    );
                }
                ((fence, ours), (label, granted))
            };
            let ((first, ours), (label, granted)) = attempt(1, 300_000).await;
            assert!(ours && first > 0, "fresh row not granted: {case}");
            assert_eq!(
                label, "holder-1",
                "the grant did not record its label: {case}"
            );
            let (kept, shown) = attempt(2, 300_000).await;
            assert_eq!(kept, (first, false), "live lease taken over: {case}");
            assert_eq!(
                shown,
                (label, granted),
                "a refused try changed the row: {case}"
            );
            tokio::time::sleep(Duration::from_millis(400)).await;
            let ((second, ours), (label, regranted)) = attempt(3, 60_000_000).await;
            assert!(
                ours && second > first,
                "expired lease not taken over: {case}"
            );
            assert_eq!(
                label, "holder-3",
                "the takeover did not record its label: {case}"
            );
            assert!(
                regranted > granted,
                "the takeover kept the old grant time: {case}"
            );
            let (kept, shown) = attempt(4, 60_000_000).await;
            assert_eq!(kept, (second, false), "live lease taken over: {case}");
            assert_eq!(
                shown,
                (label, regranted),
                "a refused try changed the row: {case}"
            );
            let mut other = connect(false).await.expect("a second connection");
            assert_eq!(scratch.release(&mut other, name, 3).await, 1, "{case}");
            let ((third, ours), _) = attempt(5, 60_000_000).await;
            assert!(
                ours && third > second,
                "released row not taken over: {case}"
            );
        }
    }
}

/// While the mark says a waiter entry may be live, `acquire.sql` refuses a free row and
/// `acquire_in_line.sql` grants it to the first in line alone; once the mark has passed,
/// `acquire.sql` grants it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_row_marked_for_waiters_goes_to_the_first_in_line() {
    for simultaneous in [false, true] {
        let Some(mut conn) = connect(simultaneous).await else {
            return;
        };
        let scratch = Scratch::new(&mut conn, "marked").await;
        let (name, first, lifetime_us) = ("marked", [0xAA_u8; 16], 1_000_000_i64);
        let start = scratch
            .acquire(&mut conn, name, (1, 60_000_000), None)
            .await;
        assert!(start < FREE_BUT_REFUSED, "fresh row not granted");
        for (text, waiter) in [(&scratch.mark, None), (&scratch.register, Some(first))] {
            let mut query = sqlx::query(AssertSqlSafe(text.clone())).bind(name.as_bytes());
            let sleeper: Option<u64> = None;
            query = match waiter {
                // The entry, naming no parked connection, with the terms a release grants.
                Some(waiter) => query
                    .bind(waiter.to_vec())
                    .bind(lifetime_us)
                    .bind(sleeper)
                    .bind(vec![0xAA_u8; 16])
                    .bind(60_000_000_i64)
                    .bind(b"first".to_vec())
                    .bind(lifetime_us)
                    .bind(sleeper),
                None => query.bind(lifetime_us).bind(lifetime_us),
            };
            query
                .execute(&mut conn)
                .await
                .expect("mark, then place the entry");
        }
        assert_eq!(scratch.release(&mut conn, name, 1).await, 1);

        let newcomer = scratch
            .acquire(&mut conn, name, (2, 60_000_000), None)
            .await;
        assert_eq!(newcomer, FREE_BUT_REFUSED, "acquire.sql took a marked row");
        let newcomer = scratch.take(&mut conn, name, (2, 60_000_000)).await;
        assert_eq!(
            newcomer,
            (0, FREE_BUT_REFUSED),
            "acquire_row.sql took a marked row"
        );
        let behind = Some([0xBB_u8; 16]);
        let behind = scratch
            .acquire(&mut conn, name, (3, 60_000_000), behind)
            .await;
        assert_eq!(
            behind, FREE_BUT_REFUSED,
            "granted ahead of the first in line"
        );
        assert_eq!(
            scratch.row(&mut conn, name).await.1,
            Some(vec![1; 16]),
            "the row was taken (a release keeps the token, holding nothing)"
        );
        let turn = scratch
            .acquire(&mut conn, name, (4, 60_000_000), Some(first))
            .await;
        assert!(
            turn > start && turn < FREE_BUT_REFUSED,
            "the first in line was refused"
        );
        assert_eq!(scratch.release(&mut conn, name, 4).await, 1);

        tokio::time::sleep(Duration::from_micros(lifetime_us as u64 + 200_000)).await;
        let after = scratch
            .acquire(&mut conn, name, (5, 60_000_000), None)
            .await;
        assert!(
            after > turn && after < FREE_BUT_REFUSED,
            "refused after the mark passed"
        );
        assert_eq!(scratch.release(&mut conn, name, 5).await, 1);
        let (rows, last) = scratch.take(&mut conn, name, (6, 60_000_000)).await;
        assert!(
            rows == 1 && last > after && last < FREE_BUT_REFUSED,
            "acquire_row.sql refused after the mark passed: {rows} rows, insert id {last}"
        );
    }
}

/// `acquire_row.sql` takes an existing row over exactly when `acquire.sql` would, with the
/// same fence, label and grant time, in both assignment orders; a refusal matches no row and
/// reports the lease left; a missing row matches none and reports insert id 0, even right
/// after a statement that set one on the same connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_row_statement_takes_over_when_the_upsert_would() {
    for simultaneous in [false, true] {
        let Some(mut conn) = connect(simultaneous).await else {
            return;
        };
        let scratch = Scratch::new(&mut conn, "row").await;
        let (name, case) = ("row", format!("simultaneous {simultaneous}"));
        let other = scratch
            .acquire(&mut conn, "other", (9, 60_000_000), None)
            .await;
        assert!(other > 0 && other < FREE_BUT_REFUSED, "{case}");
        let missing = scratch.take(&mut conn, name, (1, 300_000)).await;
        assert_eq!(missing, (0, 0), "a missing row: {case}");

        let first = scratch.acquire(&mut conn, name, (1, 300_000), None).await;
        let (rows, left) = scratch.take(&mut conn, name, (2, 300_000)).await;
        let left = left.checked_sub(FREE_BUT_REFUSED);
        assert!(
            rows == 0 && left.is_some_and(|left| (1..=300_000).contains(&left)),
            "a live lease: {rows} rows, {left:?} us left: {case}"
        );
        let (fence, holder, label, granted) = scratch.row(&mut conn, name).await;
        assert_eq!((fence, holder), (first as i64, Some(vec![1; 16])), "{case}");

        tokio::time::sleep(Duration::from_millis(400)).await;
        let (rows, second) = scratch.take(&mut conn, name, (3, 60_000_000)).await;
        assert!(
            rows == 1 && second > first,
            "expired lease not taken over: {case}"
        );
        let taken = scratch.row(&mut conn, name).await;
        assert_eq!(taken.0, second as i64, "another fence reported: {case}");
        assert_eq!(taken.1, Some(vec![3; 16]), "{case}");
        assert!(taken.2 == "holder-3" && label == "holder-1", "{case}");
        assert!(
            taken.3 > granted,
            "the takeover kept the old grant time: {case}"
        );

        assert_eq!(scratch.release(&mut conn, name, 3).await, 1, "{case}");
        assert_eq!(
            scratch.release(&mut conn, name, 3).await,
            0,
            "released twice: {case}"
        );
        let (rows, third) = scratch.take(&mut conn, name, (4, 60_000_000)).await;
        assert!(
            rows == 1 && third > second,
            "released row not taken over: {case}"
        );
    }
}
