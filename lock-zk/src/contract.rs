//! The [`DistributedLock`] contract on ZooKeeper: acquisition through lock-core's engine, and
//! the operators' calls (`inspect`, `list`, `force_release`) on the lock nodes.

use std::sync::Arc;

use lock_core::backend::Deadline;
use lock_core::{
    AcquireOptions, Capabilities, Claim, DistributedLock, Error, ErrorKind, Leader, LeaderTicks,
    LockGuard, LockName, LockStatus, Result, async_trait,
};

use crate::ZkLock;
use crate::claims::ZkClaimSteps;
use crate::errors::BACKEND;
use crate::recipe::Recipe;
use crate::semaphore::ZkSemaphoreSteps;

#[async_trait]
impl DistributedLock for ZkLock {
    /// Creates our lock node and waits, watching only the node before ours, until it is the
    /// lowest or `options.wait` passes. `options.lease` is ignored: the session is the lease.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the node is deleted in the background if the future is dropped, including
    /// while its create is in flight (found by its protected prefix), retried until it is known
    /// gone or the session ends.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for invalid options;
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when a request gets no
    /// answer within the operation timeout or no session can be had within the wait;
    /// [`ErrorKind::Backend`](lock_core::ErrorKind::Backend) when ZooKeeper refuses (ACLs).
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        lock_core::backend::acquire(&self.steps, name, options).await
    }

    /// Read and write holds in Curator's `InterProcessReadWriteLock` layout under
    /// [`rw_lock_path`](ZkLock::rw_lock_path): `__READ__` and `__WRIT__` ephemeral sequential
    /// nodes in one queue; a write node holds when it is first, a read node when no write node
    /// comes before it; each waiter watches one node (a writer its predecessor, a reader the
    /// first writer).
    ///
    /// Permits in Curator's `InterProcessSemaphoreV2` layout under
    /// [`semaphore_path`](ZkLock::semaphore_path): acquirers take turns through the mutex at
    /// `locks/`; the one whose turn it is creates its lease node in `leases/` and waits,
    /// watching `leases/`, until there are no more lease nodes than permits. Our lease nodes
    /// name their limit, so an acquirer asking with another limit than distlock holders use is
    /// refused; Curator's carry none and are counted, never checked.
    ///
    /// The fencing token is the read, write or lease node's creation zxid; the session is the
    /// lease.
    ///
    /// # Cancel safety
    ///
    /// As [`acquire_with`](DistributedLock::acquire_with): every node of the acquisition (the
    /// semaphore's mutex node, a lease node) is deleted in the background.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a permit limit of 0
    /// or above [`Claim::MAX_PERMITS`], or another limit than distlock holders of the semaphore
    /// use; otherwise as [`acquire_with`](DistributedLock::acquire_with).
    async fn acquire_claim_with(
        &self,
        name: &LockName,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        claim.validate()?;
        let recipe = match claim {
            Claim::Read => Recipe::Read,
            Claim::Write => Recipe::Write,
            Claim::Permit { max_permits } => {
                let steps = Arc::new(ZkSemaphoreSteps {
                    steps: Arc::clone(&self.steps),
                    max_permits,
                });
                return lock_core::backend::acquire(&steps, name, options).await;
            }
            other => {
                let message = format!("the zookeeper backend has no {} claims", other.kind());
                return Err(Error::new(ErrorKind::Unsupported, message).with_backend(BACKEND));
            }
        };
        let steps = Arc::new(ZkClaimSteps {
            steps: Arc::clone(&self.steps),
            recipe,
        });
        lock_core::backend::acquire(&steps, name, options).await
    }

    /// A candidate in Curator's `LeaderLatch` layout under
    /// [`election_path`](ZkLock::election_path): an ephemeral sequential `latch-` node whose
    /// data is the published value; the lowest node leads, each other candidate watches the
    /// node before its own. A Curator `LeaderLatch` on that path is a candidate of the same
    /// election. The epoch is the node's creation zxid; the session is the lease.
    ///
    /// # Cancel safety
    ///
    /// As [`acquire_with`](DistributedLock::acquire_with).
    ///
    /// # Errors
    ///
    /// As [`acquire_with`](DistributedLock::acquire_with).
    async fn campaign_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let steps = Arc::new(ZkClaimSteps {
            steps: Arc::clone(&self.steps),
            recipe: Recipe::Latch,
        });
        lock_core::backend::acquire(&steps, name, options).await
    }

    /// The lowest latch node still there (a Curator latch's too), its data as the value and
    /// its creation zxid as the epoch; the term from the election's count (see
    /// [`election_path`](ZkLock::election_path)).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// As [`inspect`](DistributedLock::inspect).
    async fn read_leader(&self, name: &LockName) -> Result<Option<Leader>> {
        let session = self.steps.sessions.session(Deadline::NEVER).await;
        let session = session.map_err(|error| self.context(error, "leader", name))?;
        let leader = crate::election::leader(&session, &self.steps.election_parent(name)).await;
        leader.map_err(|error| self.context(error, "leader", name))
    }

    /// One persistent recursive watch on the election's parent: every node made, deleted or
    /// rewritten under it ticks, and so does every change of the connection.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future or the stream removes the watch.
    ///
    /// # Errors
    ///
    /// As [`inspect`](DistributedLock::inspect).
    async fn watch_leader(&self, name: &LockName) -> Result<LeaderTicks> {
        let session = self.steps.sessions.session(Deadline::NEVER).await;
        let session = session.map_err(|error| self.context(error, "watch_leader", name))?;
        let ticks = crate::election::ticks(&session, &self.steps.election_parent(name)).await;
        ticks.map_err(|error| self.context(error, "watch_leader", name))
    }

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .with_fencing()
            .with_lost_detection()
            .with_fair_fifo()
            .with_server_side_wait()
            .with_rw_lock()
            .with_semaphore()
            .with_election()
    }

    fn default_options(&self) -> AcquireOptions {
        self.defaults.clone()
    }

    /// Reads `name`'s lock nodes: the lowest is the holder (its data is the owner label, or
    /// what a Curator client wrote there; its fencing token the node's creation zxid, as the
    /// grant gives it; `granted_at` the node's creation time, which is when the holder joined
    /// the queue; no `lease_left`, since the session keeps the node), every other one a waiter.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when a request gets no
    /// answer within the operation timeout or no session can be had;
    /// [`ErrorKind::Backend`](lock_core::ErrorKind::Backend) when ZooKeeper refuses (ACLs).
    async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        let status = self.steps.status(name).await;
        status.map_err(|error| self.context(error, "inspect", name))
    }

    /// Lists the lock parents under the root and keeps the names (decoded from their parents'
    /// node names) that start with `prefix` and have a lock node now.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// As [`inspect`](DistributedLock::inspect).
    async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        let names = self.steps.held_names(prefix).await;
        names.map_err(|error| {
            let error = error.with_server(&self.steps.server).with_backend(BACKEND);
            match error.operation() {
                // Where the error arose said what failed (a session opening: "connect").
                Some(_) => error,
                None => error.with_operation("list"),
            }
        })
    }

    /// Deletes `name`'s holder node if its fencing token (creation zxid) is `fencing_token`,
    /// naming that node's path and data version, so a newer holder's node is never deleted.
    /// The holder's lost signal fires when its next confirmation finds the node gone.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the delete takes effect on the server entirely or not at all.
    ///
    /// # Errors
    ///
    /// As [`inspect`](DistributedLock::inspect); when the connection breaks twice around the
    /// delete, whether it took effect is unknown, and the error is `Unavailable`.
    async fn force_release(&self, name: &LockName, fencing_token: u64) -> Result<bool> {
        let released = self.steps.force_release(name, fencing_token).await;
        released.map_err(|error| self.context(error, "force_release", name))
    }

    fn service_identity(&self) -> usize {
        Arc::as_ptr(&self.steps) as usize
    }
}

impl ZkLock {
    /// `error` from `operation` on `name`, with this service's backend, server and the lock.
    fn context(&self, error: Error, operation: &'static str, name: &LockName) -> Error {
        error
            .with_server(&self.steps.server)
            .context(BACKEND, operation, name)
    }
}
