//! The lock row of the MySQL/MariaDB fenced handoff floor: the one write every grant of a fenced,
//! table-backed lock makes. A grant, to a client taking a free lock or to the first waiter of a
//! release, is one `UPDATE` of the name's row that raises the fencing counter (one past it, and
//! never below the database clock in microseconds, as lock-sql's) and records the new owner and
//! its lease; a release with nobody waiting is one `UPDATE` that frees the row. The new fence
//! comes back in the OK packet's insert id, so no read follows. The floor's in-process relay,
//! not the row, decides who holds the lock: the row's conditions only name it.

use lock_sql::sqlx::{self, MySqlConnection};

use crate::BenchResult;

/// The floor's lock table, created by the first client.
const TABLE: &str = "CREATE TABLE IF NOT EXISTS peer_fenced_floor (\
    name VARBINARY(255) NOT NULL PRIMARY KEY, \
    owner BINARY(16) NULL, \
    fence BIGINT NOT NULL, \
    lease_end DATETIME(6) NOT NULL) ENGINE = InnoDB";

/// The name's row, free, unless it is there already.
const ROW: &str = "INSERT IGNORE INTO peer_fenced_floor (name, owner, fence, lease_end) \
    VALUES (?, NULL, 0, UTC_TIMESTAMP(6))";

/// Binds: owner, name. Grants the row to `owner` with the next fence and a lease.
const GRANT: &str = "UPDATE peer_fenced_floor \
    SET owner = ?, \
        fence = LAST_INSERT_ID(GREATEST(fence + 1, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED))), \
        lease_end = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND \
    WHERE name = ?";

/// Binds: name, owner. Frees the row while `owner` holds it.
const FREE: &str = "UPDATE peer_fenced_floor SET owner = NULL, lease_end = UTC_TIMESTAMP(6) \
    WHERE name = ? AND owner = ?";

/// One name's lock row.
#[derive(Debug, Clone)]
pub struct FencedRow {
    name: String,
}

impl FencedRow {
    /// The row of `name`, made free on `conn` if it was not there.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: each statement commits alone, and both are idempotent.
    ///
    /// # Errors
    ///
    /// A statement's error.
    pub async fn open(conn: &mut MySqlConnection, name: &str) -> BenchResult<Self> {
        sqlx::raw_sql(TABLE).execute(&mut *conn).await?;
        sqlx::query(ROW).bind(name).execute(&mut *conn).await?;
        Ok(Self {
            name: name.to_owned(),
        })
    }

    /// Grants the row to `owner`: the new fence.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped mid-statement, the grant may or may not have committed.
    ///
    /// # Errors
    ///
    /// The statement's error, or a row that is gone.
    pub async fn grant(&self, conn: &mut MySqlConnection, owner: &[u8; 16]) -> BenchResult<u64> {
        let done = sqlx::query(GRANT)
            .bind(&owner[..])
            .bind(self.name.as_str())
            .execute(&mut *conn)
            .await?;
        match (done.rows_affected(), done.last_insert_id()) {
            (1, fence @ 1..) => Ok(fence),
            (rows, fence) => Err(format!("a grant matched {rows} rows, fence {fence}").into()),
        }
    }

    /// Frees the row if `owner` holds it.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped mid-statement, the row may or may not be free.
    ///
    /// # Errors
    ///
    /// The statement's error.
    pub async fn free(&self, conn: &mut MySqlConnection, owner: &[u8; 16]) -> BenchResult<()> {
        sqlx::query(FREE)
            .bind(self.name.as_str())
            .bind(&owner[..])
            .execute(&mut *conn)
            .await?;
        Ok(())
    }
}
