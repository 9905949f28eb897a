//! `grant_head.sql` sent by hand on a scratch table, after `release.sql`: it grants the lock
//! to the first live waiter entry on the terms the entry carries and names that entry's
//! parked connection, passes over an entry of the releasing owner, grants nothing to an entry
//! without terms (placed by an earlier version) but names its connection, and does nothing
//! while the lock is held; in both orders a server may evaluate assignments.

use sqlx::{AssertSqlSafe, MySqlConnection};

/// The statements of one scratch table, its names filled in.
struct Scratch {
    table: String,
    release: String,
    grant: String,
}

/// A waiter entry placed by hand: its id byte, how many seconds ago it was queued, whether
/// it is still live, the connection it parks, and its grant terms (owner byte, label).
struct Entry {
    id: u8,
    queued_s_ago: i64,
    live: bool,
    sleeper: u64,
    terms: Option<(u8, &'static str)>,
}

/// The lock row as read back: owner token, label, fence, lease left in milliseconds.
type Row = (Option<Vec<u8>>, Option<Vec<u8>>, i64, i64);

impl Scratch {
    async fn new(conn: &mut MySqlConnection) -> Self {
        let (table, fill) = super::acquire_statements::scratch_tables(conn, "grant").await;
        Self {
            release: fill(include_str!("../../sql/mysql/release.sql")),
            grant: fill(include_str!("../../sql/mysql/grant_head.sql")),
            table,
        }
    }

    /// Makes `name` held by `[owner; 16]` with fence 5 for a minute, marked for waiters.
    async fn held(&self, conn: &mut MySqlConnection, name: &str, owner: u8) {
        let sql = format!(
            "INSERT INTO `{}` (name, owner, fence, lease_end, queued_until) \
             VALUES (?, ?, 5, UTC_TIMESTAMP(6) + INTERVAL 60 SECOND, \
                     UTC_TIMESTAMP(6) + INTERVAL 60 SECOND)",
            self.table
        );
        let query = sqlx::query(AssertSqlSafe(sql))
            .bind(name.as_bytes())
            .bind(vec![owner; 16]);
        query.execute(conn).await.expect("the held row");
    }

    async fn place(&self, conn: &mut MySqlConnection, name: &str, entry: &Entry) {
        let sql = format!(
            "INSERT INTO `{}_waiters` (name, waiter, expires_at, queued_at, sleeper, \
                                       grant_owner, grant_lease_us, grant_label) \
             VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? SECOND, \
                     UTC_TIMESTAMP(6) - INTERVAL ? SECOND, ?, ?, ?, ?)",
            self.table
        );
        let (owner, label) = match entry.terms {
            Some((owner, label)) => (Some(vec![owner; 16]), Some(label.as_bytes().to_vec())),
            None => (None, None),
        };
        let query = sqlx::query(AssertSqlSafe(sql))
            .bind(name.as_bytes())
            .bind(vec![entry.id; 16])
            .bind(if entry.live { 60 } else { -1 })
            .bind(entry.queued_s_ago)
            .bind(entry.sleeper)
            .bind(owner.clone())
            .bind(owner.map(|_| 45_000_000_i64))
            .bind(label);
        query.execute(conn).await.expect("place an entry");
    }

    /// `release.sql` by `[owner; 16]`: matched rows and insert id.
    async fn release(&self, conn: &mut MySqlConnection, name: &str, owner: u8) -> (u64, u64) {
        let query = sqlx::query(AssertSqlSafe(self.release.clone()))
            .bind(name.as_bytes())
            .bind(vec![owner; 16]);
        let done = query.execute(conn).await.expect("release.sql");
        (done.rows_affected(), done.last_insert_id())
    }

    /// `grant_head.sql` after a release by `released`: matched rows (1 when the lock was
    /// free and an entry live) and insert id.
    async fn grant(
        &self,
        conn: &mut MySqlConnection,
        name: &str,
        released: Option<u8>,
    ) -> (u64, u64) {
        let query = sqlx::query(AssertSqlSafe(self.grant.clone()))
            .bind(name.as_bytes())
            .bind(released.map(|owner| vec![owner; 16]))
            .bind(name.as_bytes());
        let done = query.execute(conn).await.expect("grant_head.sql");
        (done.rows_affected(), done.last_insert_id())
    }

    async fn row(&self, conn: &mut MySqlConnection, name: &str) -> Row {
        let sql = format!(
            "SELECT owner, owner_label, fence, \
                    TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_end) DIV 1000 \
             FROM `{}` WHERE name = ?",
            self.table
        );
        let query = sqlx::query_as(AssertSqlSafe(sql)).bind(name.as_bytes());
        query.fetch_one(conn).await.expect("read the row")
    }

    /// The ids (first byte) of the live entries of `name`.
    async fn live(&self, conn: &mut MySqlConnection, name: &str) -> Vec<u8> {
        let sql = format!(
            "SELECT waiter FROM `{}_waiters` WHERE name = ? AND expires_at > UTC_TIMESTAMP(6) \
             ORDER BY queued_at",
            self.table
        );
        let query = sqlx::query_as::<_, (Vec<u8>,)>(AssertSqlSafe(sql)).bind(name.as_bytes());
        let rows = query.fetch_all(conn).await.expect("read the entries");
        rows.into_iter().map(|(waiter,)| waiter[0]).collect()
    }
}

async fn exec(conn: &mut MySqlConnection, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(conn)
        .await
        .expect("statement");
}

fn entry(id: u8, queued_s_ago: i64, sleeper: u64, terms: Option<(u8, &'static str)>) -> Entry {
    Entry {
        id,
        queued_s_ago,
        live: true,
        sleeper,
        terms,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_grants_the_first_live_entry_on_its_terms() {
    for simultaneous in [false, true] {
        let Some(mut conn) = super::acquire_statements::connect(simultaneous).await else {
            return;
        };
        let case = format!("simultaneous {simultaneous}");
        let scratch = Scratch::new(&mut conn).await;
        let name = "line";
        scratch.held(&mut conn, name, 1).await;
        let expired = Entry {
            live: false,
            ..entry(0xE0, 50, 12, Some((0xE0, "expired")))
        };
        for placed in [
            entry(0x01, 60, 11, Some((1, "the releaser"))),
            expired,
            entry(0xF1, 40, 13, Some((0xF1, "first"))),
            entry(0xF2, 30, 14, Some((0xF2, "second"))),
        ] {
            scratch.place(&mut conn, name, &placed).await;
        }
        assert_eq!(scratch.release(&mut conn, name, 1).await, (1, 1), "{case}");
        assert_eq!(
            scratch.grant(&mut conn, name, Some(1)).await,
            (1, 13),
            "the grant to the first live entry, ringing its connection: {case}"
        );
        let (owner, label, fence, left_ms) = scratch.row(&mut conn, name).await;
        assert_eq!(owner, Some(vec![0xF1; 16]), "{case}");
        assert_eq!(label, Some(b"first".to_vec()), "{case}");
        assert!(fence > 5, "the fence did not rise: {fence}, {case}");
        assert!(
            (40_000..=45_000).contains(&left_ms),
            "a 45 s grant has {left_ms} ms left: {case}"
        );
        assert_eq!(
            scratch.live(&mut conn, name).await,
            vec![0x01, 0xF1, 0xF2],
            "an entry ended: {case}"
        );

        // Held (taken meanwhile): nothing granted, nobody rung.
        let taken = scratch.grant(&mut conn, name, None).await;
        assert_eq!(taken, (0, 0), "{case}");
        assert_eq!(scratch.row(&mut conn, name).await.0, Some(vec![0xF1; 16]));

        // An entry without terms first in line, once the first releaser and the granted
        // waiter left: rung, granted nothing.
        let left = format!(
            "DELETE FROM `{}_waiters` WHERE sleeper IN (11, 13)",
            scratch.table
        );
        exec(&mut conn, &left).await;
        assert_eq!(
            scratch.release(&mut conn, name, 0xF1).await,
            (1, 1),
            "{case}"
        );
        scratch
            .place(&mut conn, name, &entry(0x0D, 35, 15, None))
            .await;
        let old = scratch.grant(&mut conn, name, Some(0xF1)).await;
        assert_eq!(old.1, 15, "an entry without terms is not rung: {case}");
        let (owner, _, fence_after, left_ms) = scratch.row(&mut conn, name).await;
        assert!(
            owner == Some(vec![0xF1; 16]) && left_ms < 0 && fence_after == fence,
            "an entry without terms was granted: {case}"
        );
        assert_eq!(
            scratch.live(&mut conn, name).await,
            vec![0x0D, 0xF2],
            "{case}"
        );

        // Nobody live: nothing granted, nobody rung.
        exec(
            &mut conn,
            &format!("DELETE FROM `{}_waiters`", scratch.table),
        )
        .await;
        assert_eq!(scratch.grant(&mut conn, name, None).await, (0, 0), "{case}");
    }
}
