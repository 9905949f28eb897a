//! MySQL's and MariaDB's answers to operators: inspect, list, force-release. Names and labels
//! are stored as bytes and read back as UTF-8.

use lock_core::LockStatus;
use sqlx::Row;

use super::{MICROSECOND, MyDb};
use crate::db::admin::{count, holder};
use crate::db::settle;
use crate::error::{SqlError, timed};

impl MyDb {
    pub(crate) async fn inspect(&self, name: &str) -> Result<LockStatus, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.inspect.clone()).bind(name.as_bytes());
        let result = timed(self.timeout, query.fetch_one(&mut *conn)).await;
        let row = settle(&mut conn, result)?;
        let holders = match row.try_get::<Option<i64>, _>("fence")? {
            Some(fence) => {
                let label: Option<Vec<u8>> = row.try_get("owner_label")?;
                let label = label.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
                let (granted, left) = (row.try_get("granted_us")?, row.try_get("remaining_us")?);
                vec![holder(label, fence, granted, left, MICROSECOND)?]
            }
            None => Vec::new(),
        };
        Ok(LockStatus::new(holders, count(row.try_get("waiters")?)))
    }

    /// Names that are not UTF-8 (written by hand) are left out: no lock name matches them.
    pub(crate) async fn list(&self, pattern: &str) -> Result<Vec<String>, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query =
            sqlx::query_scalar::<_, Vec<u8>>(self.sql.list.clone()).bind(pattern.as_bytes());
        let result = timed(self.timeout, query.fetch_all(&mut *conn)).await;
        let names = settle(&mut conn, result)?;
        Ok(names
            .into_iter()
            .filter_map(|bytes| String::from_utf8(bytes).ok())
            .collect())
    }

    pub(crate) async fn force_release(&self, name: &str, fence: i64) -> Result<bool, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.force_release.clone())
            .bind(name.as_bytes())
            .bind(fence);
        let result = timed(self.timeout, query.execute(&mut *conn)).await;
        let done = settle(&mut conn, result)?;
        let released = done.rows_affected() == 1;
        if released && done.last_insert_id() != 0 {
            self.grant_head(&mut conn, name, None).await?;
        }
        Ok(released)
    }
}
