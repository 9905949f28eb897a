//! The "non-scalable" ZooKeeper lock, built as a foil: every waiter creates an ephemeral
//! sequential node, then watches the parent's children and re-checks on every change, so each
//! release wakes every waiter (the herd effect) instead of only the next one.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use zookeeper_client::{Acls, Client, CreateMode};

use super::zk_node::{NodeHeld, session_under};
use crate::BenchResult;
use crate::contend::{Contender, Held};

/// One session of the herd lock under `parent`; `wakeups` counts watch notifications received.
#[derive(Debug, Clone)]
pub struct HerdLock {
    client: Client,
    parent: String,
    wakeups: Arc<AtomicU64>,
}

impl HerdLock {
    /// Opens a session to `hosts` (`host:port,...`) for the lock at `parent`, counting wake-ups
    /// into `wakeups`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping it closes the connection it was opening.
    ///
    /// # Errors
    ///
    /// The session's or the parent's creation error.
    pub async fn connect(hosts: &str, parent: &str, wakeups: Arc<AtomicU64>) -> BenchResult<Self> {
        Ok(Self {
            client: session_under(hosts, parent).await?,
            parent: parent.to_owned(),
            wakeups,
        })
    }
}

#[async_trait]
impl Contender for HerdLock {
    async fn acquire(&self) -> BenchResult<Box<dyn Held>> {
        let options = CreateMode::EphemeralSequential.with_acls(Acls::anyone_all());
        let base = format!("{}/lock-", self.parent);
        let (_, sequence) = self.client.create(&base, &[], &options).await?;
        let node = format!("lock-{sequence}");
        loop {
            let (mut children, watcher) = self.client.list_and_watch_children(&self.parent).await?;
            children.sort();
            if children.first() == Some(&node) {
                return Ok(Box::new(NodeHeld {
                    client: self.client.clone(),
                    path: format!("{}/{node}", self.parent),
                }));
            }
            watcher.changed().await;
            self.wakeups.fetch_add(1, Ordering::Relaxed);
        }
    }
}
