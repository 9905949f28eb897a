//! SQLite's answers to operators: inspect, list, force-release.

use lock_core::LockStatus;
use sqlx::Row;

use super::{LiteDb, MILLISECOND};
use crate::db::admin::{count, holder};
use crate::db::settle;
use crate::error::{SqlError, timed};

impl LiteDb {
    pub(crate) async fn inspect(&self, name: &str) -> Result<LockStatus, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.inspect.clone()).bind(name);
        let result = timed(self.timeout, query.fetch_one(&mut *conn)).await;
        let row = settle(&mut conn, result)?;
        let holders = match row.try_get::<Option<i64>, _>(1)? {
            Some(fence) => {
                let (label, granted, left) = (row.try_get(0)?, row.try_get(2)?, row.try_get(3)?);
                vec![holder(label, fence, granted, left, MILLISECOND)?]
            }
            None => Vec::new(),
        };
        Ok(LockStatus::new(holders, count(row.try_get(4)?)))
    }

    pub(crate) async fn list(&self, pattern: &str) -> Result<Vec<String>, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query_scalar::<_, String>(self.sql.list.clone()).bind(pattern);
        let result = timed(self.timeout, query.fetch_all(&mut *conn)).await;
        settle(&mut conn, result)
    }

    pub(crate) async fn force_release(&self, name: &str, fence: i64) -> Result<bool, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.force_release.clone())
            .bind(name)
            .bind(fence);
        let result = timed(self.timeout, query.execute(&mut *conn)).await;
        Ok(settle(&mut conn, result)?.rows_affected() == 1)
    }
}
