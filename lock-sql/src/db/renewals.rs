//! The renewals of a service's holds, gathered: one statement for every hold renewing within a
//! few milliseconds of the others (the lease scheduler sends a service's renewals together).
//! The dialect supplies the statement ([`RenewAll`]); the gathering, the lock order and the
//! answers are the same for all.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lock_core::backend::{Gather, Sending};

use crate::db::{Owner, whole};
use crate::error::SqlError;

/// One hold's renewal: its name, owner token and lease in microseconds.
#[derive(Debug)]
pub(crate) struct Renewal {
    pub(crate) name: String,
    pub(crate) owner: Owner,
    pub(crate) lease_us: i64,
}

/// A dialect's batch renewal.
pub(crate) trait RenewAll: Clone + Send + Sync + 'static {
    /// Extends each hold of `batch` (sorted by name, so concurrent batches lock rows in one
    /// order) that is still ours and live. Returns the positions in `batch` of the holds
    /// extended, and how many statements that took.
    fn renew_all(
        &self,
        batch: &[Renewal],
    ) -> impl Future<Output = Result<(HashSet<usize>, u64), SqlError>> + Send;
}

/// Renewals gathered into batches, each sent by `R`.
#[derive(Debug)]
pub(crate) struct Renewals<R> {
    gather: Gather<Renewal, Result<bool, SqlError>>,
    renewer: R,
    statements: Arc<AtomicU64>,
}

impl<R: RenewAll> Renewals<R> {
    pub(crate) fn new(renewer: R) -> Self {
        Self {
            gather: Gather::renewals(),
            renewer,
            statements: Arc::default(),
        }
    }

    /// How many statements the renewals have taken.
    pub(crate) fn statements(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }

    /// Extends our live hold of `name` to `lease` from now, with the renewals of this
    /// service's other holds asked for within a few milliseconds, or alone at once: `false`
    /// when the hold is not ours any more.
    pub(crate) async fn renew(
        &self,
        name: &str,
        owner: Owner,
        lease: Duration,
        sending: Sending,
    ) -> Result<bool, SqlError> {
        let renewal = Renewal {
            name: name.to_owned(),
            owner,
            lease_us: whole(lease, Duration::from_micros(1)),
        };
        let (renewer, statements) = (self.renewer.clone(), Arc::clone(&self.statements));
        let run = move |batch| answer_batch(renewer, statements, batch);
        let outcome = self.gather.send(renewal, sending, run).await;
        outcome.unwrap_or_else(|| {
            Err(SqlError::Sqlx(sqlx::Error::Protocol(
                "the renewal batch ended without an answer".to_owned(),
            )))
        })
    }
}

/// Runs one batch: for each renewal, in the order submitted, whether its hold was extended,
/// or the statement's error, shared.
async fn answer_batch<R: RenewAll>(
    renewer: R,
    statements: Arc<AtomicU64>,
    mut batch: Vec<Renewal>,
) -> Vec<Result<bool, SqlError>> {
    let order = sorted_by_name(&mut batch);
    let extended = match renewer.renew_all(&batch).await {
        Ok((extended, taken)) => {
            statements.fetch_add(taken, Ordering::Relaxed);
            extended
        }
        Err(error) => {
            statements.fetch_add(1, Ordering::Relaxed);
            let shared = Arc::new(error);
            return batch
                .iter()
                .map(|_| Err(SqlError::Shared(Arc::clone(&shared))))
                .collect();
        }
    };
    let mut answers = vec![false; batch.len()];
    for (sorted, submitted) in order.into_iter().enumerate() {
        answers[submitted] = extended.contains(&sorted);
    }
    answers.into_iter().map(Ok).collect()
}

/// Sorts `batch` by name and returns where each renewal was before.
fn sorted_by_name(batch: &mut Vec<Renewal>) -> Vec<usize> {
    let mut indexed: Vec<(usize, Renewal)> = batch.drain(..).enumerate().collect();
    indexed.sort_by(|(_, a), (_, b)| a.name.cmp(&b.name));
    let (order, sorted): (Vec<usize>, Vec<Renewal>) = indexed.into_iter().unzip();
    *batch = sorted;
    order
}
