//! One hold's server side, and the cleanup armed around each acquire attempt.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{HeldLock, LockName, Result};

use crate::db::{Attempt, Conn, Owner};
use crate::error::SqlError;
use crate::lock::Inner;

/// A row we own: released and renewed by comparing the owner token.
#[derive(Debug)]
pub(crate) struct SqlHeld {
    pub(crate) inner: Arc<Inner>,
    pub(crate) name: LockName,
    pub(crate) owner: Owner,
}

#[async_trait]
impl HeldLock for SqlHeld {
    async fn release(&self) -> Result<bool> {
        let released = self.inner.release(None, &self.name, self.owner).await?;
        Ok(released)
    }

    async fn renew(&self, lease: Duration) -> Result<bool> {
        self.inner
            .db
            .renew(self.name.as_str(), self.owner, lease)
            .await
            .map_err(|error| self.inner.error(error, "renew").with_lock(&self.name))
    }
}

/// One acquire attempt: the statement runs on a connection held here, and unless
/// [`settle`](PendingAttempt::settle) is called (the outcome is known), dropping this releases
/// the row by owner token in the background, on the same connection. So a dropped acquire
/// future, or a statement that failed mid-way (it may still commit), leaves no hold behind:
/// the connection runs the release only after the attempt's statement has finished.
pub(crate) struct PendingAttempt {
    armed: Option<Armed>,
}

struct Armed {
    inner: Arc<Inner>,
    name: LockName,
    owner: Owner,
    conn: Conn,
}

impl PendingAttempt {
    pub(crate) fn new(inner: &Arc<Inner>, name: &LockName, owner: Owner, conn: Conn) -> Self {
        let armed = Armed {
            inner: Arc::clone(inner),
            name: name.clone(),
            owner,
            conn,
        };
        Self { armed: Some(armed) }
    }

    /// Runs the acquire statement for a lease of `lease`.
    pub(crate) async fn run(&mut self, lease: Duration) -> Result<Attempt, SqlError> {
        let Some(armed) = self.armed.as_mut() else {
            return Err(SqlError::Sqlx(sqlx::Error::Protocol(
                "acquire attempt run after it settled".to_owned(),
            )));
        };
        let Armed {
            inner,
            name,
            owner,
            conn,
        } = armed;
        inner.db.acquire(conn, name.as_str(), *owner, lease).await
    }

    /// The outcome is known: nothing to clean up; the connection goes back to the pool.
    pub(crate) fn settle(mut self) {
        self.armed = None;
    }
}

impl Drop for PendingAttempt {
    fn drop(&mut self) {
        let Some(Armed {
            inner,
            name,
            owner,
            conn,
        }) = self.armed.take()
        else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(error) = inner.release(Some(conn), &name, owner).await {
                        tracing::warn!(%error, "cleanup after an interrupted acquire failed; the lease will end any hold");
                    }
                });
            }
            Err(_) => tracing::warn!(
                %name,
                "acquire interrupted outside a tokio runtime; the lease will end any hold"
            ),
        }
    }
}
