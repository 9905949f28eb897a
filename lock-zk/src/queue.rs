//! One lock's queue as the ensemble shows it now: the holder's node (the lowest sequence) with
//! its data and stat, and how many nodes wait behind it. What `inspect` and `force_release`
//! read.

use lock_core::Result;
use zookeeper_client::{self as zk, Stat};

use crate::errors::{convert, within};
use crate::nodes::{LOCK_MARKER, contenders_of};
use crate::session::Session;

/// The holder's lock node, as one read saw it.
#[derive(Debug)]
pub(crate) struct HolderNode {
    pub(crate) path: String,
    pub(crate) data: Vec<u8>,
    pub(crate) stat: Stat,
}

/// A lock's queue: its holder's node, if any, and the number of lock nodes behind it.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    pub(crate) holder: Option<HolderNode>,
    pub(crate) waiters: u64,
}

/// Reads the queue under `parent` for `operation`: lists the lock nodes, then reads them in
/// sequence order until one still exists. That one is the holder: every node before it in the
/// listing is gone, and any node made since has a higher sequence. A missing parent is an
/// empty queue.
pub(crate) async fn read(
    session: &Session,
    parent: &str,
    operation: &'static str,
) -> Result<Queue> {
    read_of(session, parent, &[LOCK_MARKER], operation).await
}

/// [`read`] for the queue of nodes marked with one of `markers`.
pub(crate) async fn read_of(
    session: &Session,
    parent: &str,
    markers: &[&'static str],
    operation: &'static str,
) -> Result<Queue> {
    let client = session.client();
    let limit = session.operation_timeout();
    let children = match within(limit, operation, client.list_children(parent)).await? {
        Ok(children) => children,
        Err(zk::Error::NoNode) => return Ok(Queue::default()),
        Err(error) => return Err(convert(error, operation)),
    };
    let contenders = contenders_of(children, markers);
    for (index, contender) in contenders.iter().enumerate() {
        let path = format!("{parent}/{}", contender.node);
        match within(limit, operation, client.get_data(&path)).await? {
            Ok((data, stat)) => {
                let behind = contenders.len() - index - 1;
                return Ok(Queue {
                    holder: Some(HolderNode { path, data, stat }),
                    waiters: u64::try_from(behind).unwrap_or(u64::MAX),
                });
            }
            // Released (or its session ended) since the listing: the next node holds now.
            Err(zk::Error::NoNode) => {}
            Err(error) => return Err(convert(error, operation)),
        }
    }
    Ok(Queue::default())
}
