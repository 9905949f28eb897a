//! `WAIT` for replicas, on connections of its own: `WAIT` blocks the connection it runs on, so
//! on the shared connection it would hold up every other command of the service (renewals of
//! other holds included) for up to its timeout.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lock_core::{Error, ErrorKind, Result};
use redis::FromRedisValue;

use crate::connection::Connection;
use crate::error::{from_redis, timed_out};
use crate::invocation::millis;
use crate::link::Link;
use crate::script_call::ScriptCall;

/// The most idle `WAIT` connections kept for reuse.
const IDLE: usize = 8;

/// Acquisitions that a number of replicas must acknowledge, each on a dedicated connection.
#[derive(Debug)]
pub(crate) struct Replicas {
    link: Link,
    pub(crate) count: usize,
    pub(crate) timeout: Duration,
    /// Idle connections and the server generation each was opened at.
    idle: Mutex<Vec<(u64, Connection)>>,
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

    /// Runs `acquire` on a connection no other command uses. The connection stays in
    /// `in_flight` until `acquire` has finished, so the cleanup of an acquisition cancelled (or
    /// failed) midway runs on that connection, where Redis runs it after the script that may
    /// still be in flight there; a connection whose work finished goes back for reuse.
    pub(crate) async fn dedicated<T>(
        &self,
        in_flight: &mut Option<Connection>,
        acquire: impl AsyncFnOnce(&mut Connection) -> Result<T>,
    ) -> Result<T> {
        let (generation, mut connection) = self.checkout().await?;
        *in_flight = Some(connection.clone());
        let outcome = acquire(&mut connection).await?;
        *in_flight = None;
        self.checkin(generation, connection);
        Ok(outcome)
    }

    /// Runs a script on `connection`, bounded by the operation timeout.
    pub(crate) async fn run_on<T: FromRedisValue>(
        &self,
        connection: &mut Connection,
        invocation: &ScriptCall,
    ) -> Result<T> {
        let script = invocation.invoke_async(connection);
        self.bounded(self.link.timeout(), script).await
    }

    /// `WAIT`s on `connection` (after a granting script there on `key`) for the required
    /// replicas: `None` when enough acknowledged, else how many did. In a cluster, the
    /// replicas are those of the shard that owns `key`.
    pub(crate) async fn shortfall(
        &self,
        connection: &mut Connection,
        key: &str,
    ) -> Result<Option<u64>> {
        let limit = self.timeout + self.link.timeout();
        let waiting = connection.wait_replicas(self.count, millis(self.timeout), key);
        let acknowledged: i64 = self.bounded(limit, waiting).await?;
        let acknowledged = u64::try_from(acknowledged).unwrap_or(0);
        Ok((acknowledged < self.count as u64).then_some(acknowledged))
    }

    /// The error for a grant only `acknowledged` replicas acknowledged; `released`: whether
    /// the grant was taken back.
    pub(crate) fn too_few(&self, acknowledged: u64, released: bool) -> Error {
        let outcome = if released {
            "the grant was released"
        } else {
            "releasing it failed too, so its lease will end it"
        };
        Error::new(
            ErrorKind::Unavailable,
            format!(
                "only {acknowledged} of the {} required replicas acknowledged the lock within \
                 {:?}; a failover could hand it to a second holder, so {outcome}",
                self.count, self.timeout
            ),
        )
    }

    /// A connection no other command uses: an idle one, or a new one.
    /// Idle connections opened on a former master (before the Sentinels' last switch) are
    /// dropped.
    async fn checkout(&self) -> Result<(u64, Connection)> {
        let generation = self.link.server().generation();
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            idle.retain(|(opened_at, _)| *opened_at >= generation);
            idle.pop()
        };
        match idle {
            Some(idle) => Ok(idle),
            None => {
                let connection = self.link.server().open(self.link.connect_timeout()).await?;
                Ok((generation, connection))
            }
        }
    }

    /// Returns a connection whose last command succeeded, for reuse, with the generation it
    /// was opened at.
    fn checkin(&self, generation: u64, connection: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE {
            idle.push((generation, connection));
        }
    }

    async fn bounded<T>(
        &self,
        limit: Duration,
        command: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<T> {
        match lock_core::backend::timeout(limit, command).await {
            Ok(result) => result.map_err(|error| from_redis(error, self.link.name())),
            Err(_) => Err(timed_out(self.link.name(), limit)),
        }
    }
}
