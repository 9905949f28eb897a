//! One connection to one Redis server, replaced when it fails or goes silent.
//!
//! Commands share a multiplexed connection. A command that gets no answer within the operation
//! timeout fails with `Unavailable`, and the connection it used is discarded: the next command
//! opens a new one. So a peer that stops answering without closing the socket (a pulled cable,
//! a frozen host) costs one timeout, not every command until the kernel gives up on the socket.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{Error, ErrorKind, Result};
use redis::RedisResult;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::connection::Connection;
use crate::error::{BACKEND, from_redis, timed_out};
use crate::scripts::Channels;
use crate::source::Server;

/// The connection of one server: cheap to clone, clones share it.
#[derive(Clone)]
pub(crate) struct Link {
    inner: Arc<Inner>,
}

struct Inner {
    server: Server,
    connect_timeout: Duration,
    timeout: Duration,
    /// The connection in use, its number, and the server's generation when it was opened;
    /// `None` until the first command, or after the last one failed. Every command reads it
    /// without waiting.
    current: std::sync::Mutex<Option<Current>>,
    /// Held while connecting, so one caller connects at a time; it keeps when the last connect
    /// failed, and why: callers that were waiting for that attempt get its outcome instead of
    /// each trying (and timing out) again in turn.
    connecting: Mutex<Option<(Instant, String)>>,
}

/// The connection in use: its number, the connection, and the server generation it was
/// opened at (a lower generation than the server's now: it goes to a former master).
type Current = (u64, Connection, u64);

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("server", &self.inner.server.name)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

impl Link {
    /// A link that connects on first use.
    pub(crate) fn new(server: Server, connect_timeout: Duration, timeout: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                server,
                connect_timeout,
                timeout,
                current: std::sync::Mutex::new(None),
                connecting: Mutex::new(None),
            }),
        }
    }

    /// The server's name (`redis://host:port`), for messages.
    pub(crate) fn name(&self) -> &str {
        &self.inner.server.name
    }

    /// The server, for connections of other kinds (pub/sub, `WAIT`).
    pub(crate) fn server(&self) -> &Server {
        &self.inner.server
    }

    /// How the server carries wake-ups.
    pub(crate) fn channels(&self) -> Channels {
        self.inner.server.channels()
    }

    /// The operation timeout.
    pub(crate) fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The connect timeout.
    pub(crate) fn connect_timeout(&self) -> Duration {
        self.inner.connect_timeout
    }

    /// Opens the connection now (so connecting reports an unreachable server at once).
    pub(crate) async fn connect(&self) -> Result<()> {
        self.connection().await.map(drop)
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Option<Current>> {
        self.inner
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current connection, opening one if there is none. One caller connects at a time;
    /// the others wait for its outcome and share a failure rather than retrying in turn.
    async fn connection(&self) -> Result<(u64, Connection)> {
        let generation = self.inner.server.generation();
        let cached = self.current().clone();
        if let Some((number, connection, opened_at)) = cached {
            if opened_at >= generation {
                return Ok((number, connection));
            }
            self.discard(number); // opened on a former master
        }
        let asked = Instant::now();
        let mut failed = self.inner.connecting.lock().await;
        let cached = self.current().clone();
        if let Some((number, connection, opened_at)) = cached {
            if opened_at >= generation {
                return Ok((number, connection)); // opened while we waited
            }
        }
        if let Some((failed_at, reason)) = &*failed {
            if *failed_at >= asked {
                return Err(Error::new(ErrorKind::Unavailable, reason.clone())
                    .with_backend(BACKEND)
                    .with_server(self.name()));
            }
        }
        match self.inner.server.open(self.inner.connect_timeout).await {
            Ok(connection) => {
                let number = rand::random::<u64>();
                *self.current() = Some((number, connection.clone(), generation));
                *failed = None;
                Ok((number, connection))
            }
            Err(error) => {
                *failed = Some((Instant::now(), error.message().to_owned()));
                Err(error)
            }
        }
    }

    /// Discards connection `number` if it is still the current one.
    fn discard(&self, number: u64) {
        let mut current = self.current();
        if current
            .as_ref()
            .is_some_and(|(current, _, _)| *current == number)
        {
            *current = None;
        }
    }

    /// Runs one command on the connection within the operation timeout. A timeout or a broken
    /// connection discards the connection for the next command.
    pub(crate) async fn run<T, F, Fut>(&self, command: F) -> Result<T>
    where
        F: FnOnce(Connection) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        let (number, connection) = self.connection().await?;
        let limit = self.inner.timeout;
        match lock_core::backend::timeout(limit, command(connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => {
                // READONLY: the server was a master and is a replica now (a failover); the
                // next connection asks the Sentinels for the new master.
                if error.is_io_error()
                    || error.is_connection_dropped()
                    || error.is_unrecoverable_error()
                    || error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly)
                {
                    self.discard(number);
                }
                Err(from_redis(error, self.name()))
            }
            Err(_elapsed) => {
                self.discard(number);
                Err(timed_out(self.name(), limit))
            }
        }
    }
}
