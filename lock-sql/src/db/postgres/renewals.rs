//! PostgreSQL's batch renewal: `renew_all.sql`, one `UPDATE` over the batch's arrays.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use sqlx::{Postgres, SqlStr};

use crate::db::pool::Stash;
use crate::db::renewals::{RenewAll, Renewal};
use crate::db::settle;
use crate::error::{SqlError, timed};

/// What a batch's statement needs.
#[derive(Clone, Debug)]
pub(crate) struct PgRenewer {
    pub(crate) pool: Arc<Stash<Postgres>>,
    pub(crate) sql: SqlStr,
    pub(crate) timeout: Duration,
}

impl RenewAll for PgRenewer {
    async fn renew_all(&self, batch: &[Renewal]) -> Result<(HashSet<usize>, u64), SqlError> {
        let names: Vec<&str> = batch.iter().map(|renewal| renewal.name.as_str()).collect();
        let owners: Vec<&[u8]> = batch
            .iter()
            .map(|renewal| renewal.owner.as_bytes())
            .collect();
        let leases: Vec<i64> = batch.iter().map(|renewal| renewal.lease_us).collect();
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query_scalar::<_, i64>(self.sql.clone())
            .bind(names)
            .bind(owners)
            .bind(leases);
        let result = timed(self.timeout, query.fetch_all(&mut *conn)).await;
        let rows = settle(&mut conn, result)?;
        self.pool.reuse_after_batch(conn);
        let extended = rows
            .into_iter()
            .filter_map(|position| usize::try_from(position - 1).ok())
            .collect();
        Ok((extended, 1))
    }
}
