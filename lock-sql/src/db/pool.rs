//! The connection pool every dialect shares: its settings, and the warm connections kept
//! between a lock's statements.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sqlx::pool::{Pool, PoolConnection, PoolOptions};
use sqlx::{Connection, Database};

use crate::settings::Settings;

/// A connection idle at least this long is pinged before it is handed out again: long enough
/// that a lock's statements, which follow one another within microseconds, never wait for a
/// ping; short enough that a server restarted since (which takes longer) is noticed before a
/// statement fails on the dead connection.
pub(crate) const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// A pool of at most `pool_size` connections that waits at most the connect timeout for one,
/// and pings only connections that sat idle for [`PING_AFTER_IDLE`] (sqlx's default pings
/// every one: a round trip before each statement).
pub(crate) fn pool_options<DB: Database>(config: &Settings) -> PoolOptions<DB> {
    PoolOptions::<DB>::new()
        .max_connections(config.pool_size)
        .acquire_timeout(config.service.connect_timeout)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_AFTER_IDLE {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

/// The pool, and the connections a lock's statements just finished on, kept warm for the next
/// statement. sqlx pings every connection given back to its pool before anyone may have it
/// again, a round trip per statement; a connection whose statement completed needs none, so
/// the hot statements hand theirs back here ([`reuse`](Stash::reuse)) and every
/// [`acquire`](Stash::acquire) takes the most recent of these first. While anyone waits on the
/// pool, a connection handed back goes to the pool instead, so a stashed connection never
/// keeps a waiter waiting; and since a connection is here only between statements, the stash
/// never holds more than the pool lends.
#[derive(Debug)]
pub(crate) struct Stash<DB: Database> {
    pool: Pool<DB>,
    state: Mutex<Warm<DB>>,
}

#[derive(Debug)]
struct Warm<DB: Database> {
    /// Connections handed back, and when.
    conns: Vec<(PoolConnection<DB>, Instant)>,
    /// Acquisitions waiting on the pool.
    waiting: usize,
}

impl<DB: Database> Stash<DB> {
    pub(crate) fn new(pool: Pool<DB>) -> Self {
        Self {
            pool,
            state: Mutex::new(Warm {
                conns: Vec::new(),
                waiting: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Warm<DB>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection handed back last, unless it sat for [`PING_AFTER_IDLE`] (then it goes
    /// back to the pool, which checks it), else one from the pool.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropped while it waits on the pool, it no longer counts as waiting.
    ///
    /// # Errors
    ///
    /// The pool's: it timed out or is closed.
    pub(crate) async fn acquire(&self) -> Result<PoolConnection<DB>, sqlx::Error> {
        let waiting = {
            let mut state = self.state();
            while let Some((conn, since)) = state.conns.pop() {
                if since.elapsed() < PING_AFTER_IDLE {
                    return Ok(conn);
                }
                // Dropped, it returns to the pool, which pings it before lending it again.
                drop(conn);
            }
            state.waiting += 1;
            Waiting(self)
        };
        // Boxed: sqlx's acquire is a future of some 18 KB in a release build, which every
        // statement's future would otherwise carry (and copy whenever it is boxed or moved),
        // though the stashed connection above serves nearly every statement.
        let conn = Box::pin(self.pool.acquire()).await;
        drop(waiting);
        conn
    }

    /// Keeps `conn`, whose last statement completed with the server's answer, for the next
    /// statement, or gives it back to the pool when anyone waits there. A connection whose
    /// statement failed or was cut off goes back to the pool instead (by being dropped), which
    /// checks it.
    pub(crate) fn reuse(&self, conn: PoolConnection<DB>) {
        let mut state = self.state();
        if state.waiting == 0 {
            state.conns.push((conn, Instant::now()));
        }
    }

    /// [`reuse`](Self::reuse) for a connection that just carried a batch (a renewal of
    /// thousands of holds): its buffers go back to their default size first. A connection
    /// keeps the largest buffers it ever needed, and batches take whichever pooled connection
    /// is free, so without this every connection a batch ever took would keep a batch's worth
    /// of memory (megabytes at 100,000 holds) for as long as it lives.
    #[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
    pub(crate) fn reuse_after_batch(&self, mut conn: PoolConnection<DB>) {
        conn.shrink_buffers();
        self.reuse(conn);
    }
}

/// One acquisition counted as waiting on the pool, until dropped.
struct Waiting<'a, DB: Database>(&'a Stash<DB>);

impl<DB: Database> Drop for Waiting<'_, DB> {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.waiting = state.waiting.saturating_sub(1);
    }
}
