//! The SQL backend's steps: one statement per try on a pooled connection, woken by
//! PostgreSQL's `NOTIFY` or, on the polling dialects, by this service's own releases.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{Busy, Deadline, Grant, LockSteps, Try};
use lock_core::{AcquireOptions, LockName, Result, async_trait};
use tokio::time::Instant;

use crate::db::{Attempt, Conn, Owner};
use crate::held::SqlHeld;
use crate::lock::Inner;
use crate::wakeups::Waiter;

/// The longest a PostgreSQL waiter sleeps between tries while notifications flow: a safety
/// net for a notification lost in a reconnect.
const NOTIFIED_FALLBACK: Duration = Duration::from_secs(5);

/// A service's steps, shared by its clones.
#[derive(Debug)]
pub(crate) struct SqlSteps {
    pub(crate) inner: Arc<Inner>,
}

/// One acquisition: the name, the lease, its wake-up subscription (made before the first try,
/// so a release in between is not missed), and the owner token and connection of the statement
/// in flight (a cleanup releases by that owner on that connection, after the statement).
#[derive(Debug)]
pub(crate) struct SqlAttempt {
    name: LockName,
    lease: Duration,
    waiter: Waiter,
    owner: Owner,
    conn: Option<Conn>,
}

#[async_trait]
impl LockSteps for SqlSteps {
    type Attempt = SqlAttempt;

    fn backend(&self) -> &'static str {
        self.inner.settings.dialect.backend()
    }

    fn server(&self) -> &str {
        &self.inner.settings.server
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> SqlAttempt {
        SqlAttempt {
            name: name.clone(),
            lease: options.lease,
            waiter: self.inner.wakeups.subscribe(),
            owner: Owner::random(),
            conn: None,
        }
    }

    async fn try_once(&self, attempt: &mut SqlAttempt) -> Result<Try> {
        let inner = &self.inner;
        inner.ensure_schema().await?;
        let conn = inner.db.connection().await;
        let conn = attempt
            .conn
            .insert(conn.map_err(|error| inner.error(error, "acquire"))?);
        attempt.owner = Owner::random();
        let sent = Instant::now();
        let outcome = inner
            .db
            .acquire(conn, attempt.name.as_str(), attempt.owner, attempt.lease)
            .await
            .map_err(|error| inner.error(error, "acquire"))?;
        // Settled: the connection goes back to the pool, nothing is left to clean up.
        attempt.conn = None;
        Ok(match outcome {
            Attempt::Granted(fence) => {
                let held = SqlHeld {
                    inner: Arc::clone(inner),
                    name: attempt.name.clone(),
                    owner: attempt.owner,
                };
                Try::Granted(Grant::new(fence, Arc::new(held), sent))
            }
            Attempt::Contended => Try::Busy(Busy::polled()),
            Attempt::Held(remaining) => {
                let pushed = inner.wakeups.server_side();
                let busy = Busy {
                    recheck_within: pushed.then_some(NOTIFIED_FALLBACK),
                    pushed,
                };
                // Retry just after the holder's lease ends, at the latest.
                Try::Busy(match remaining {
                    Some(left) => busy.within(left + Duration::from_millis(1)),
                    None => busy,
                })
            }
        })
    }

    async fn wait(&self, attempt: &mut SqlAttempt, until: Deadline) {
        attempt.waiter.wait(attempt.name.as_str(), until).await;
    }

    /// Releases by the attempt's owner token: first on the connection its statement ran on
    /// (so the release follows the statement), and if that connection is unusable (its
    /// statement was cut off mid-reply), on a fresh one from the pool.
    async fn clean_up(&self, attempt: &mut SqlAttempt) -> Result<()> {
        let (name, owner) = (&attempt.name, attempt.owner);
        if let Some(conn) = attempt.conn.take() {
            match self.inner.release(Some(conn), name, owner).await {
                Ok(_) => return Ok(()),
                Err(error) => {
                    tracing::debug!(%error, "release on the interrupted connection failed; using another");
                }
            }
        }
        self.inner.release(None, name, owner).await.map(drop)
    }

    fn needs_cleanup(&self, attempt: &SqlAttempt) -> bool {
        attempt.conn.is_some()
    }
}
