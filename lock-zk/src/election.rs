//! Elections on ZooKeeper, in Curator's `LeaderLatch` layout: candidates make ephemeral
//! sequential `_c_<uuid>-latch-<seq>` nodes (data: the published value) under the name's
//! election parent, and the lowest leads. The epoch is the leader node's creation zxid.
//!
//! Terms: the election parent's data is `<term> <epoch>`, the count of leaders and the epoch
//! of the last one counted. A distlock leader counts itself as it is granted (a write of the
//! parent at the version read, only ever for a higher epoch); a leader not counted yet (a
//! distlock leader about to count itself) shows as one more than the count. Curator's latches
//! do not count themselves, so an election with Curator candidates has gaps no observer can
//! size; observers report them as unknown.

use futures_util::StreamExt;
use lock_core::{Leader, LeaderTicks, Result};
use zookeeper_client::{self as zk, Acls, AddWatchMode, CreateMode};

use crate::errors::{RETRY_PAUSE, convert, is_connection_loss, within};
use crate::label::owner_label;
use crate::nodes::fencing_token;
use crate::queue;
use crate::recipe::LATCH_MARKER;
use crate::session::Session;

/// How many times counting a leader or reading one is tried when others change the
/// election in between.
const TRIES: u32 = 10;

/// The parent's `<term> <epoch>`; an empty or foreign parent (made by Curator) counts none.
fn read_count(data: &[u8]) -> (u64, u64) {
    let text = std::str::from_utf8(data).unwrap_or_default();
    let mut fields = text.split(' ').map(str::parse::<u64>);
    match (fields.next(), fields.next(), fields.next()) {
        (Some(Ok(term)), Some(Ok(epoch)), None) => (term, epoch),
        _ => (0, 0),
    }
}

/// The term of a leader of `epoch`, given the parent's count: `None` when a later leader was
/// counted already (the leader read is gone).
fn term_of(epoch: u64, (term, counted): (u64, u64)) -> Option<u64> {
    match epoch.cmp(&counted) {
        std::cmp::Ordering::Equal => Some(term),
        std::cmp::Ordering::Greater => Some(term + 1),
        std::cmp::Ordering::Less => None,
    }
}

/// Makes the election parent `parent` a persistent node (its ancestors containers) unless it
/// exists, so the count in its data outlives gaps with no candidate.
pub(crate) async fn make_parent(session: &Session, parent: &str) -> Result<()> {
    let acl = session.config().acl.entries();
    let client = session.client();
    let limit = session.operation_timeout();
    let persistent = CreateMode::Persistent.with_acls(Acls::new(&acl));
    for _ in 0..TRIES {
        match within(limit, "acquire", client.create(parent, b"", &persistent)).await? {
            Ok(_) | Err(zk::Error::NodeExists) => return Ok(()),
            Err(zk::Error::NoNode) => {
                let ancestor = parent.rsplit_once('/').map_or("/", |(up, _)| up);
                let containers = CreateMode::Container.with_acls(Acls::new(&acl));
                match within(limit, "acquire", client.mkdir(ancestor, &containers)).await? {
                    Ok(()) | Err(zk::Error::NodeExists) => {}
                    Err(error) if is_connection_loss(&error) => {}
                    Err(error) => return Err(convert(error, "acquire")),
                }
            }
            Err(error) if is_connection_loss(&error) => tokio::time::sleep(RETRY_PAUSE).await,
            Err(error) => return Err(convert(error, "acquire")),
        }
    }
    Ok(()) // the create that follows reports what keeps failing
}

/// Counts the leader whose node was created at `czxid` in `parent`'s data. Best effort: a
/// leader that could not count itself shows as one more than the count until the next
/// leader counts itself, which observers that saw both report as a gap of unknown size.
pub(crate) async fn register(session: &Session, parent: &str, czxid: i64) {
    let epoch = fencing_token(czxid);
    let client = session.client();
    let limit = session.operation_timeout();
    for _ in 0..TRIES {
        let read = within(limit, "acquire", client.get_data(parent)).await;
        let (data, stat) = match read {
            Ok(Ok(read)) => read,
            Ok(Err(error)) if is_connection_loss(&error) => {
                tokio::time::sleep(RETRY_PAUSE).await;
                continue;
            }
            _ => break,
        };
        let (term, counted) = read_count(&data);
        if counted >= epoch {
            return; // counted already, or a later leader was
        }
        let count = format!("{} {epoch}", term + 1);
        let write = client.set_data(parent, count.as_bytes(), Some(stat.version));
        match within(limit, "acquire", write).await {
            Ok(Ok(_)) => return,
            Ok(Err(zk::Error::BadVersion)) => {}
            Ok(Err(error)) if is_connection_loss(&error) => {
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            _ => break,
        }
    }
    tracing::warn!(%parent, epoch, "the leader could not be counted in the election's term");
}

/// The election's leader under `parent`: the lowest latch node still there, its data as the
/// published value, its creation zxid as the epoch; the count read after it gives the term.
pub(crate) async fn leader(session: &Session, parent: &str) -> Result<Option<Leader>> {
    let client = session.client();
    let limit = session.operation_timeout();
    for _ in 0..TRIES {
        let queue = queue::read_of(session, parent, &[LATCH_MARKER], "leader").await?;
        let Some(node) = queue.holder else {
            return Ok(None);
        };
        let data = match within(limit, "leader", client.get_data(parent)).await? {
            Ok((data, _)) => data,
            Err(zk::Error::NoNode) => continue,
            Err(error) => return Err(convert(error, "leader")),
        };
        let epoch = fencing_token(node.stat.czxid);
        // A later leader counted already: this one is gone; read again.
        let Some(term) = term_of(epoch, read_count(&data)) else {
            continue;
        };
        return Ok(Some(
            Leader::new(owner_label(&node.data), epoch).with_term(term),
        ));
    }
    let queue = queue::read_of(session, parent, &[LATCH_MARKER], "leader").await?;
    let leader = queue
        .holder
        .map(|node| Leader::new(owner_label(&node.data), fencing_token(node.stat.czxid)));
    Ok(leader)
}

/// A tick on every event under the election parent (a candidate's node made or deleted, a
/// new value, a new count) through one persistent recursive watch, and on every change of the
/// connection (events may be lost while it is down). Ends with the session.
pub(crate) async fn ticks(session: &Session, parent: &str) -> Result<LeaderTicks> {
    let client = session.client();
    let limit = session.operation_timeout();
    let watching = client.watch(parent, AddWatchMode::PersistentRecursive);
    let watcher = within(limit, "watch_leader", watching)
        .await?
        .map_err(|error| convert(error, "watch_leader"))?;
    let stream = futures_util::stream::unfold(watcher, |mut watcher| async move {
        let event = watcher.changed().await;
        if event.session_state.is_terminated() {
            return None;
        }
        Some(((), watcher))
    });
    Ok(stream.boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_reads_as_term_and_epoch_and_anything_else_as_none() {
        assert_eq!(read_count(b"7 12345"), (7, 12345));
        assert_eq!(read_count(b""), (0, 0));
        assert_eq!(read_count(b"10.0.0.1"), (0, 0));
        assert_eq!(read_count(b"7 12345 9"), (0, 0));
    }

    #[test]
    fn a_leader_not_counted_yet_is_the_next_term_and_an_older_one_is_unknown() {
        assert_eq!(term_of(500, (7, 500)), Some(7));
        assert_eq!(term_of(600, (7, 500)), Some(8));
        assert_eq!(term_of(400, (7, 500)), None);
        assert_eq!(term_of(1, (0, 0)), Some(1));
    }
}
