//! The renewals of a service's holds, gathered: one `UPDATE` for every hold renewing within a
//! few milliseconds of the others.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use sqlx::{Postgres, SqlStr};

use crate::db::pool::Stash;
use crate::db::{Owner, settle};
use crate::error::{SqlError, timed};

/// How long a renewal waits for others to share its statement: a renewal is due with two
/// thirds of its lease left, so this costs the lease nothing that matters.
pub(crate) const GATHER: Duration = Duration::from_millis(5);

/// One hold's renewal: its name, owner token and lease in microseconds.
#[derive(Debug)]
pub(crate) struct Renewal {
    pub(crate) name: String,
    pub(crate) owner: Owner,
    pub(crate) lease_us: i64,
}

/// What a batch's statement needs.
#[derive(Clone, Debug)]
pub(crate) struct Renewer {
    pub(crate) pool: Arc<Stash<Postgres>>,
    pub(crate) sql: SqlStr,
    pub(crate) timeout: Duration,
}

impl Renewer {
    /// Runs `renew_all.sql` for the batch: for each renewal, whether its hold was extended
    /// (`false`: not ours any more), or the statement's error, shared.
    pub(crate) async fn renew_all(self, mut batch: Vec<Renewal>) -> Vec<Result<bool, SqlError>> {
        let order: Vec<usize> = sorted_by_name(&mut batch);
        let renewed = match self.run(&batch).await {
            Ok(renewed) => renewed,
            Err(error) => {
                let shared = Arc::new(error);
                return batch
                    .iter()
                    .map(|_| Err(SqlError::Shared(Arc::clone(&shared))))
                    .collect();
            }
        };
        // Back in the order the renewals were submitted.
        let mut answers = vec![false; batch.len()];
        for (renewal, position) in batch.iter().zip(order) {
            let key = (renewal.name.clone(), renewal.owner.as_bytes().to_vec());
            answers[position] = renewed.contains(&key);
        }
        answers.into_iter().map(Ok).collect()
    }

    async fn run(&self, batch: &[Renewal]) -> Result<HashSet<(String, Vec<u8>)>, SqlError> {
        let names: Vec<&str> = batch.iter().map(|renewal| renewal.name.as_str()).collect();
        let owners: Vec<&[u8]> = batch
            .iter()
            .map(|renewal| renewal.owner.as_bytes())
            .collect();
        let leases: Vec<i64> = batch.iter().map(|renewal| renewal.lease_us).collect();
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query_as::<_, (String, Vec<u8>)>(self.sql.clone())
            .bind(names)
            .bind(owners)
            .bind(leases);
        let result = timed(self.timeout, query.fetch_all(&mut *conn)).await;
        let rows = settle(&mut conn, result)?;
        self.pool.reuse(conn);
        Ok(rows.into_iter().collect())
    }
}

/// Sorts `batch` by name and returns where each renewal was before.
fn sorted_by_name(batch: &mut Vec<Renewal>) -> Vec<usize> {
    let mut indexed: Vec<(usize, Renewal)> = batch.drain(..).enumerate().collect();
    indexed.sort_by(|(_, a), (_, b)| a.name.cmp(&b.name));
    let (order, sorted): (Vec<usize>, Vec<Renewal>) = indexed.into_iter().unzip();
    *batch = sorted;
    order
}
