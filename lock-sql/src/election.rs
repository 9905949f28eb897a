//! Elections on SQL: the leader is the one holder of the name's `election` claim row (a write
//! claim whose grants are counted as terms). Observers are woken by PostgreSQL notifications
//! while its listener is subscribed; otherwise (MySQL, SQLite, or a listener reconnecting) by
//! reading the row's version a few times a second.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use lock_core::backend::Deadline;
use lock_core::{Leader, LeaderTicks, LockName, Result};
use tokio::time::Instant;

use crate::claim_row::ClaimRow;
use crate::claim_steps::ELECTION;
use crate::lock::Inner;
use crate::wakeups::Waiter;

/// How often an observer without notifications reads the election row's version.
pub(crate) const VERSION_POLL: Duration = Duration::from_millis(250);

/// How often an observer with notifications checks that the listener is still subscribed.
const LISTENER_CHECK: Duration = Duration::from_secs(1);

impl Inner {
    /// The election `name`'s leader by the database clock, `None` while nobody leads.
    pub(crate) async fn leader(&self, name: &LockName) -> Result<Option<Leader>> {
        self.ensure_schema().await?;
        let read = self.db.read_claims(name.as_str(), ELECTION).await;
        let read = read.map_err(|error| self.error(error, "leader").with_lock(name))?;
        let Some((state, _)) = &read.row else {
            return Ok(None);
        };
        let mut row = ClaimRow::decode(state).ok_or_else(|| {
            lock_core::Error::new(
                lock_core::ErrorKind::Backend,
                "the election row was not written by this version of distlock",
            )
            .with_lock(name)
        })?;
        row.expire(read.now_us);
        let leader = row
            .holders
            .first()
            .map(|holder| Leader::new(holder.label.as_str(), holder.fence).with_term(row.grants));
        Ok(leader)
    }

    /// The election row's version now (`None`: no row yet).
    async fn election_version(&self, name: &LockName) -> Result<Option<i64>> {
        let read = self.db.read_claims(name.as_str(), ELECTION).await;
        let read = read.map_err(|error| self.error(error, "watch_leader").with_lock(name))?;
        Ok(read.row.map(|(_, version)| version))
    }
}

/// What a tick stream keeps between ticks.
struct Watch {
    inner: Arc<Inner>,
    name: LockName,
    waiter: Waiter,
    version: Option<i64>,
}

/// A tick on every notification for `name`, or without notifications, on every new version
/// of its row (and on a failed read, so the observer re-reads and reports the error).
pub(crate) async fn ticks(inner: Arc<Inner>, name: LockName) -> Result<LeaderTicks> {
    inner.ensure_schema().await?;
    let waiter = inner.wakeups.subscribe();
    let version = inner.election_version(&name).await?;
    let watch = Watch {
        inner,
        name,
        waiter,
        version,
    };
    let stream = futures_util::stream::unfold(watch, |mut watch| async move {
        loop {
            let notified = watch.inner.wakeups.server_side();
            let pause = if notified {
                LISTENER_CHECK
            } else {
                VERSION_POLL
            };
            let until = Deadline::after(Some(pause));
            watch.waiter.wait(watch.name.as_str(), until).await;
            if notified {
                if !until.passed(Instant::now()) {
                    return Some(((), watch)); // a notification
                }
                continue;
            }
            match watch.inner.election_version(&watch.name).await {
                Ok(version) if version == watch.version => {}
                Ok(version) => {
                    watch.version = version;
                    return Some(((), watch));
                }
                Err(_) => return Some(((), watch)),
            }
        }
    });
    Ok(stream.boxed())
}
