//! `WAIT` for replicas, on connections of its own: `WAIT` blocks the connection it runs on, so
//! on the shared connection it would hold up every other command of the service (renewals of
//! other holds included) for up to its timeout.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lock_core::{Error, ErrorKind, Result};
use redis::aio::MultiplexedConnection;

use crate::error::{from_redis, timed_out};
use crate::invocation::{self, Fence, Owner, Waiting, millis};
use crate::keys::LockKeys;
use crate::link::{Link, open};
use crate::node::{Attempt, read_attempt};

/// The most idle `WAIT` connections kept for reuse.
const IDLE: usize = 8;

/// Acquisitions that a number of replicas must acknowledge, each on a dedicated connection.
#[derive(Debug)]
pub(crate) struct Replicas {
    link: Link,
    pub(crate) count: usize,
    pub(crate) timeout: Duration,
    idle: Mutex<Vec<MultiplexedConnection>>,
}

impl Replicas {
    pub(crate) fn new(link: Link, count: usize, timeout: Duration) -> Self {
        Self {
            link,
            count,
            timeout,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// A connection no other command uses: an idle one, or a new one.
    pub(crate) async fn checkout(&self) -> Result<MultiplexedConnection> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match idle {
            Some(connection) => Ok(connection),
            None => open(self.link.server(), self.link.connect_timeout()).await,
        }
    }

    /// Returns a connection whose last command succeeded, for reuse.
    pub(crate) fn checkin(&self, connection: MultiplexedConnection) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE {
            idle.push(connection);
        }
    }

    /// Runs the acquire script on `connection`, then, on a grant, `WAIT`s there for the
    /// replicas. A grant too few replicas acknowledged is released again (on the same
    /// connection) and reported as `Unavailable`.
    pub(crate) async fn acquire(
        &self,
        connection: &mut MultiplexedConnection,
        keys: &LockKeys,
        owner: Owner<'_>,
        lease: Duration,
        waiting: Waiting<'_>,
    ) -> Result<Attempt> {
        let invocation = invocation::acquire(keys, owner, lease, waiting, Fence::Take);
        let reply = self
            .bounded(self.link.timeout(), invocation.invoke_async(connection))
            .await?;
        let attempt = read_attempt(reply, self.link.name())?;
        if !matches!(attempt, Attempt::Granted(_)) {
            return Ok(attempt);
        }
        let mut wait = redis::cmd("WAIT");
        wait.arg(self.count).arg(millis(self.timeout));
        let limit = self.timeout + self.link.timeout();
        let acknowledged: i64 = self.bounded(limit, wait.query_async(connection)).await?;
        let acknowledged = u64::try_from(acknowledged).unwrap_or(0);
        if acknowledged >= self.count as u64 {
            return Ok(attempt);
        }
        let outcome = match crate::node::Node::new(self.link.clone())
            .release(keys, owner.token)
            .await
        {
            Ok(_) => "the lock was released",
            Err(_) => "releasing it failed too, so its lease will end it",
        };
        Err(Error::new(
            ErrorKind::Unavailable,
            format!(
                "only {acknowledged} of the {} required replicas acknowledged the lock within \
                 {:?}; a failover could hand it to a second holder, so {outcome}",
                self.count, self.timeout
            ),
        ))
    }

    /// Runs the release script for `token` on `connection`.
    pub(crate) async fn release_on(
        &self,
        connection: &mut MultiplexedConnection,
        keys: &LockKeys,
        token: &str,
    ) -> Result<()> {
        let invocation = invocation::release(keys, token, None);
        let _: (i64, i64) = self
            .bounded(self.link.timeout(), invocation.invoke_async(connection))
            .await?;
        Ok(())
    }

    async fn bounded<T>(
        &self,
        limit: Duration,
        command: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<T> {
        match tokio::time::timeout(limit, command).await {
            Ok(result) => result.map_err(|error| from_redis(error, self.link.name())),
            Err(_) => Err(timed_out(self.link.name(), limit)),
        }
    }
}
