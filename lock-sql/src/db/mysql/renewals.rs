//! MySQL's and MariaDB's batch renewal: `renew_all.sql`, one `UPDATE` joined with the batch
//! as a JSON table; `renewed.sql` after it only when some hold was not extended.

use std::collections::HashSet;
use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

use sqlx::{MySql, SqlStr};

use crate::db::pool::Stash;
use crate::db::renewals::{RenewAll, Renewal};
use crate::db::settle;
use crate::error::{SqlError, timed};

/// What a batch's statements need.
#[derive(Clone, Debug)]
pub(crate) struct MyRenewer {
    pub(crate) pool: Arc<Stash<MySql>>,
    pub(crate) renew_all: SqlStr,
    pub(crate) renewed: SqlStr,
    pub(crate) timeout: Duration,
}

impl RenewAll for MyRenewer {
    async fn renew_all(&self, batch: &[Renewal]) -> Result<(HashSet<usize>, u64), SqlError> {
        let entries = as_json(batch);
        let mut conn = self.pool.acquire().await?;
        let query = sqlx::query(self.renew_all.clone()).bind(entries.as_str());
        let result = timed(self.timeout, query.execute(&mut *conn)).await;
        let matched = settle(&mut conn, result)?.rows_affected();
        if usize::try_from(matched).is_ok_and(|matched| matched == batch.len()) {
            self.pool.reuse_after_batch(conn);
            return Ok(((0..batch.len()).collect(), 1));
        }
        let query = sqlx::query_scalar::<_, i64>(self.renewed.clone()).bind(entries.as_str());
        let result = timed(self.timeout, query.fetch_all(&mut *conn)).await;
        let positions = settle(&mut conn, result)?;
        self.pool.reuse_after_batch(conn);
        let extended = positions
            .into_iter()
            .filter_map(|position| usize::try_from(position - 1).ok())
            .collect();
        Ok((extended, 2))
    }
}

/// The batch as the statements read it: `[[name hex, owner hex, lease_us], ...]`. Hex needs
/// no escaping, whatever the name holds.
fn as_json(batch: &[Renewal]) -> String {
    let mut json = String::with_capacity(batch.len() * 64 + 2);
    json.push('[');
    for (index, renewal) in batch.iter().enumerate() {
        if index > 0 {
            json.push(',');
        }
        json.push_str("[\"");
        for byte in renewal.name.as_bytes() {
            let _infallible = write!(json, "{byte:02x}");
        }
        let _infallible = write!(
            json,
            "\",\"{}\",{}]",
            renewal.owner.to_hex(),
            renewal.lease_us
        );
    }
    json.push(']');
    json
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Owner;

    #[test]
    fn names_and_owners_go_as_hex() {
        let owner = Owner::from_hex("000102030405060708090a0b0c0d0e0f").expect("hex");
        let batch = [
            Renewal {
                name: "a\"\\é".to_owned(),
                owner,
                lease_us: 30_000_000,
            },
            Renewal {
                name: "b".to_owned(),
                owner,
                lease_us: 5,
            },
        ];
        assert_eq!(
            as_json(&batch),
            "[[\"61225cc3a9\",\"000102030405060708090a0b0c0d0e0f\",30000000],\
             [\"62\",\"000102030405060708090a0b0c0d0e0f\",5]]"
        );
    }
}
