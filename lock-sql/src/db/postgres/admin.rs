//! PostgreSQL's answers to operators: inspect, list, force-release.

use lock_core::LockStatus;
use sqlx::Row;

use super::{MICROSECOND, PgDb};
use crate::db::admin::{count, holder};
use crate::db::settle;
use crate::error::{SqlError, timed};

impl PgDb {
    pub(crate) async fn inspect(&self, name: &str) -> Result<LockStatus, SqlError> {
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.sql.inspect.clone()).bind(name);
        let result = timed(self.timeout, query.fetch_one(&mut *conn)).await;
        let row = settle(&mut conn, result)?;
        let holders = match row.try_get::<Option<i64>, _>("fence")? {
            Some(fence) => vec![holder(
                row.try_get("owner_label")?,
                fence,
                row.try_get("granted_us")?,
                row.try_get("remaining_us")?,
                MICROSECOND,
            )?],
            None => Vec::new(),
        };
        Ok(LockStatus::new(holders, count(row.try_get("waiters")?)))
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
            .bind(fence)
            .bind(self.channel.as_str());
        let result = timed(self.timeout, query.fetch_optional(&mut *conn)).await;
        Ok(settle(&mut conn, result)?.is_some())
    }
}
