//! Waiting for our turn: the lowest sequence holds; each waiter watches only its predecessor.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lock_core::{Error, ErrorKind, Result};
use tokio::time::{Instant, sleep_until};
use zookeeper_client as zk;

use crate::errors::{BACKEND, convert, is_connection_loss, within};
use crate::nodes::contenders;
use crate::session::Session;

/// The pause before asking again after a connection loss, so a flapping link cannot spin.
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// How a wait ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Our node has the lowest sequence: we hold the lock.
    Acquired,
    /// The deadline passed with an earlier node still there.
    TimedOut,
    /// Our node (or its parent) is gone: it was deleted behind our back.
    Vanished,
}

/// Waits until `node` is the lowest lock node under `parent`, or the deadline passes.
///
/// Each round lists the children once and sets one watch, on the node just before ours, so a
/// release wakes exactly one waiter. `wakeups` counts the watch notifications this waiter got.
pub(crate) async fn wait_turn(
    session: &Session,
    parent: &str,
    node: &str,
    deadline: Option<Instant>,
    wakeups: &AtomicU64,
) -> Result<Turn> {
    let client = session.client();
    let limit = session.config().operation_timeout();
    loop {
        if session.is_ended() {
            return Err(session_ended());
        }
        let children = match within(limit, "acquire", client.list_children(parent)).await? {
            Ok(children) => children,
            Err(zk::Error::NoNode) => return Ok(Turn::Vanished),
            Err(error) if is_connection_loss(&error) => {
                // The next request waits for the reconnection (within the time limit).
                tokio::time::sleep(RETRY_PAUSE).await;
                continue;
            }
            Err(error) => return Err(convert(error, "acquire")),
        };
        let contenders = contenders(children);
        let Some(index) = contenders.iter().position(|c| c.node == node) else {
            return Ok(Turn::Vanished);
        };
        if index == 0 {
            return Ok(Turn::Acquired);
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Ok(Turn::TimedOut);
        }
        let predecessor = format!("{parent}/{}", contenders[index - 1].node);
        let watched = within(limit, "acquire", client.get_and_watch_data(&predecessor)).await?;
        let watcher = match watched {
            Ok((_, _, watcher)) => watcher,
            Err(zk::Error::NoNode) => continue,
            Err(error) if is_connection_loss(&error) => {
                tokio::time::sleep(RETRY_PAUSE).await;
                continue;
            }
            Err(error) => return Err(convert(error, "acquire")),
        };
        let until_deadline = async {
            match deadline {
                Some(deadline) => sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = watcher.changed() => {
                wakeups.fetch_add(1, Ordering::Relaxed);
            }
            () = until_deadline => return Ok(Turn::TimedOut),
            () = session.ended().cancelled() => return Err(session_ended()),
        }
    }
}

fn session_ended() -> Error {
    Error::new(
        ErrorKind::Unavailable,
        "the ZooKeeper session ended while waiting; the next acquire opens a new session",
    )
    .with_backend(BACKEND)
    .with_operation("acquire")
}
