//! Read-write locks on ZooKeeper: the mutex's steps in the read-write queue (Curator's
//! `InterProcessReadWriteLock` layout: `__READ__` and `__WRIT__` nodes under one parent).

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{Deadline, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, LockName, Result, async_trait};

use crate::errors::BACKEND;
use crate::recipe::Recipe;
use crate::steps::{ZkAttempt, ZkSteps};

/// The steps of acquisitions in one recipe's queue: the service's steps, with the recipe
/// choosing the parent, the node's marker and which node each waits for.
#[derive(Debug)]
pub(crate) struct ZkClaimSteps {
    pub(crate) steps: Arc<ZkSteps>,
    pub(crate) recipe: Recipe,
}

#[async_trait]
impl LockSteps for ZkClaimSteps {
    type Attempt = ZkAttempt;

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn server(&self) -> &str {
        &self.steps.server
    }

    fn leases(&self) -> &Leases {
        &self.steps.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> ZkAttempt {
        self.steps.begin_as(name, options, self.recipe)
    }

    async fn try_once(&self, attempt: &mut ZkAttempt) -> Result<Try> {
        self.steps.try_once(attempt).await
    }

    async fn wait(&self, attempt: &mut ZkAttempt, until: Deadline) {
        self.steps.wait(attempt, until).await;
    }

    async fn abandon(&self, attempt: &mut ZkAttempt) -> Result<()> {
        self.steps.abandon(attempt).await
    }

    async fn clean_up(&self, attempt: &mut ZkAttempt) -> Result<()> {
        self.steps.clean_up(attempt).await
    }

    fn needs_cleanup(&self, attempt: &ZkAttempt) -> bool {
        self.steps.needs_cleanup(attempt)
    }

    fn cleanup_window(&self, options: &AcquireOptions) -> Option<Duration> {
        self.steps.cleanup_window(options)
    }
}
