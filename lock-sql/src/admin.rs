//! What operators read and do through a [`SqlLock`](crate::SqlLock): inspect a lock, list held
//! names, force a stuck hold to end by its fencing token.

use lock_core::{LockName, LockStatus, Result};

use crate::db::{Owner, like_prefix};
use crate::lock::Inner;

impl Inner {
    /// The live hold on `name`, if any, and how many acquisitions wait for it.
    pub(crate) async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        self.ensure_schema().await?;
        self.db
            .inspect(name.as_str())
            .await
            .map_err(|error| self.error(error, "inspect").with_lock(name))
    }

    /// The held names starting with `prefix`, sorted. Rows whose name is not a valid lock
    /// name (written by hand) are left out.
    pub(crate) async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        self.ensure_schema().await?;
        let matched = self
            .db
            .list(&like_prefix(prefix))
            .await
            .map_err(|error| self.error(error, "list"))?;
        // The exact test: SQLite's LIKE also matches other ASCII cases.
        let mut names: Vec<LockName> = matched
            .into_iter()
            .filter(|name| name.starts_with(prefix))
            .filter_map(|name| LockName::new(name).ok())
            .collect();
        names.sort();
        Ok(names)
    }

    /// Ends the live hold on `name` whose fencing token is `token`, waking this service's
    /// waiters as a release does.
    pub(crate) async fn force_release(&self, name: &LockName, token: u64) -> Result<bool> {
        // Counters are stored signed: a larger token was never granted.
        let Ok(fence) = i64::try_from(token) else {
            return Ok(false);
        };
        self.ensure_schema().await?;
        let released = self
            .db
            .force_release(name.as_str(), fence)
            .await
            .map_err(|error| self.error(error, "force_release").with_lock(name))?;
        if released {
            self.wakeups.released(name.as_str());
        }
        Ok(released)
    }

    /// Removes the waiter entry `waiter` of `name`.
    pub(crate) async fn leave(&self, name: &LockName, waiter: Owner) -> Result<()> {
        self.db
            .leave(None, name.as_str(), waiter)
            .await
            .map_err(|error| self.error(error, "acquire").with_lock(name))?;
        // Removed: a failure to wake the next in line costs it only its wait (its park ends
        // within a second), so it is no failure of this acquisition.
        if let Err(error) = self.db.pass_on(name.as_str()).await {
            tracing::debug!(%error, "waking the next in line failed");
        }
        Ok(())
    }
}
