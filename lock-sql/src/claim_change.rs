//! Changing a claim row: read it with the database clock, decide (after dropping ended leases
//! and expired queue entries), write it back by compare-and-set on its version, and start
//! over when another change came in between. Waiters hear of changes that may let them in.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::backend::HeldLock;
use lock_core::{Error, ErrorKind, LockName, Result};

use crate::claim_row::ClaimRow;
use crate::db::Owner;
use crate::lock::Inner;

/// What a decision did to the row: whether to write it, and whether the change may let a
/// waiter in (a hold or a queue entry gone).
pub(crate) struct Effect {
    pub(crate) write: bool,
    pub(crate) wake: bool,
}

/// One claim row: a name and a kind (`semaphore`, `rw` or `election`; no two share a row).
#[derive(Clone, Debug)]
pub(crate) struct RowKey {
    pub(crate) name: LockName,
    pub(crate) kind: &'static str,
}

/// How a change of the row went.
pub(crate) enum Changed<T> {
    Done(T),
    /// Other changes kept winning the compare-and-set: nothing was written.
    Crowded,
}

impl Inner {
    /// Applies `decide` (given the row and the database clock in microseconds) to `key`'s row
    /// by compare-and-set, up to `tries` times.
    ///
    /// # Errors
    ///
    /// What `decide` returns; the database's errors; `Backend` for a row this version cannot
    /// read.
    pub(crate) async fn change_claims<T: Send>(
        &self,
        key: &RowKey,
        tries: u32,
        operation: &'static str,
        mut decide: impl FnMut(&mut ClaimRow, i64) -> Result<(T, Effect)> + Send,
    ) -> Result<Changed<T>> {
        let (name, kind) = (key.name.as_str(), key.kind);
        let fail = |error| self.error(error, operation).with_lock(&key.name);
        for _ in 0..tries {
            let read = self.db.read_claims(name, kind).await.map_err(fail)?;
            let mut row = match &read.row {
                None => ClaimRow::default(),
                Some((state, _)) => ClaimRow::decode(state).ok_or_else(|| unreadable(key))?,
            };
            let expired = row.expire(read.now_us);
            let (value, effect) = decide(&mut row, read.now_us)?;
            if !effect.write && !expired {
                return Ok(Changed::Done(value));
            }
            let version = read.row.as_ref().map(|(_, version)| *version);
            let wake = effect.wake || expired;
            let written = self
                .db
                .write_claims((name, kind), &row.encode(), (version, wake))
                .await;
            if !written.map_err(fail)? {
                let pause = Duration::from_micros(rand::random_range(200..2_000));
                tokio::time::sleep(pause).await;
                continue;
            }
            if wake {
                // PostgreSQL's update notified every process; this service's waiters on the
                // polling dialects hear it here.
                self.wakeups.released(name);
            }
            return Ok(Changed::Done(value));
        }
        Ok(Changed::Crowded)
    }
}

fn unreadable(key: &RowKey) -> Error {
    Error::new(
        ErrorKind::Backend,
        format!(
            "the {} row of {:?} in the claims table was not written by this version of distlock",
            key.kind,
            key.name.as_str()
        ),
    )
}

fn crowded(operation: &'static str) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        "other changes to the claim row kept coming first; try again",
    )
    .with_operation(operation)
}

/// How many compare-and-set rounds a release or renewal gets before it gives up.
const HOLD_TRIES: u32 = 50;

/// A hold in a claim row: released and renewed by its member token.
#[derive(Debug)]
pub(crate) struct ClaimHeld {
    pub(crate) inner: Arc<Inner>,
    pub(crate) key: RowKey,
    pub(crate) member: Owner,
}

#[async_trait]
impl HeldLock for ClaimHeld {
    async fn release(&self) -> Result<bool> {
        let member = self.member;
        let changed = self
            .inner
            .change_claims(&self.key, HOLD_TRIES, "release", |row, _| {
                let released = row.release(member);
                Ok((
                    released,
                    Effect {
                        write: released,
                        wake: released,
                    },
                ))
            })
            .await?;
        match changed {
            Changed::Done(released) => Ok(released),
            Changed::Crowded => Err(crowded("release")),
        }
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        let (member, lease) = (self.member, micros(lease));
        let changed = self
            .inner
            .change_claims(&self.key, HOLD_TRIES, "renew", |row, now| {
                let live = row.renew(member, now, now.saturating_add(lease));
                Ok((
                    live,
                    Effect {
                        write: live,
                        wake: false,
                    },
                ))
            })
            .await?;
        match changed {
            Changed::Done(live) => Ok(live),
            Changed::Crowded => Err(crowded("renew")),
        }
    }

    async fn relabel(&self, label: &str) -> Result<bool> {
        let member = self.member;
        let changed = self
            .inner
            .change_claims(&self.key, HOLD_TRIES, "proclaim", |row, now| {
                let live = row.relabel(member, now, label);
                Ok((
                    live,
                    Effect {
                        write: live,
                        wake: live,
                    },
                ))
            })
            .await?;
        match changed {
            Changed::Done(live) => Ok(live),
            Changed::Crowded => Err(crowded("proclaim")),
        }
    }
}

/// A duration in whole microseconds, saturating.
pub(crate) fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}
