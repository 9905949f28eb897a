//! The ZooKeeper lock service: one session, any number of lock names.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use lock_core::{
    AcquireOptions, Capabilities, DistributedLock, LockGuard, LockName, Result, async_trait,
};
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::ZkConfig;
use crate::errors::BACKEND;
use crate::held::ZkHeld;
use crate::names::node_name;
use crate::pending::PendingNode;
use crate::session::Session;
use crate::wait::{Turn, wait_turn};

/// Distributed locks on a ZooKeeper ensemble, over one session.
///
/// Each lock name is a parent node `<root>/<escaped name>`; each acquisition creates an
/// ephemeral sequential child `_c_<uuid>-lock-<seq>` (Curator's InterProcessMutex layout), and
/// the lowest sequence holds. When the session expires a new one is opened on the next acquire;
/// holds of the old session are lost.
#[derive(Debug)]
pub struct ZkLock {
    config: Arc<ZkConfig>,
    session: Mutex<Arc<Session>>,
    wakeups: Arc<AtomicU64>,
}

impl ZkLock {
    /// Establishes a session with the ensemble `config` names.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the connection attempt; nothing is created on
    /// the server except the chroot node.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when no session is
    /// established within the connect timeout; [`ErrorKind::Backend`](lock_core::ErrorKind::Backend)
    /// when the chroot cannot be created (for example, no permission).
    pub async fn connect(config: ZkConfig) -> Result<Self> {
        let config = Arc::new(config);
        let session = Session::open(Arc::clone(&config)).await?;
        Ok(Self {
            config,
            session: Mutex::new(session),
            wakeups: Arc::default(),
        })
    }

    /// The configuration this service connected with.
    pub fn config(&self) -> &ZkConfig {
        &self.config
    }

    /// The parent node of `name`'s lock nodes, relative to the chroot: `<root>/<escaped name>`.
    /// Point Curator's `InterProcessMutex` at this path to share the lock with Java services.
    pub fn lock_path(&self, name: &LockName) -> String {
        format!("{}/{}", self.config.root, node_name(name))
    }

    /// The ZooKeeper client of the current session (opening a new session if the last one
    /// ended), for other work on the same session.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a session being opened is abandoned.
    ///
    /// # Errors
    ///
    /// As [`connect`](ZkLock::connect), when a new session must be opened.
    pub async fn client(&self) -> Result<zookeeper_client::Client> {
        Ok(self.session().await?.client().clone())
    }

    /// How many watch notifications on a predecessor node this service's waiters have received.
    /// With the herd-free recipe one release wakes one waiter.
    pub fn predecessor_wakeups(&self) -> u64 {
        self.wakeups.load(Ordering::Relaxed)
    }

    /// The live session, replacing an ended one.
    async fn session(&self) -> Result<Arc<Session>> {
        let mut current = self.session.lock().await;
        if current.is_ended() {
            *current = Session::open(Arc::clone(&self.config)).await?;
        }
        Ok(Arc::clone(&current))
    }

    async fn acquire_inner(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        options.validate()?;
        let deadline = options
            .wait
            .and_then(|wait| Instant::now().checked_add(wait));
        let session = self.session().await?;
        let parent = self.lock_path(name);
        let mut pending = PendingNode::new(Arc::clone(&session), parent.clone());
        let czxid = loop {
            let czxid = pending.create().await?;
            let node = pending.node().unwrap_or_default().to_owned();
            match wait_turn(&session, &parent, &node, deadline, &self.wakeups).await? {
                Turn::Acquired => break czxid,
                Turn::TimedOut => {
                    pending.remove().await;
                    return Ok(None);
                }
                Turn::Vanished if deadline.is_some_and(|d| Instant::now() >= d) => {
                    return Ok(None);
                }
                Turn::Vanished => pending.forget(),
            }
        };
        let (held, lost) = ZkHeld::start(session, pending.disarm());
        let token = u64::try_from(czxid).unwrap_or_default();
        Ok(Some(
            LockGuard::builder(name.clone(), token, held)
                .backend(BACKEND)
                .lost(lost)
                .build(),
        ))
    }
}

#[async_trait]
impl DistributedLock for ZkLock {
    /// Creates our lock node and waits, watching only the node before ours, until it is the
    /// lowest or `options.wait` passes. `options.lease` is ignored: the session is the lease.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the node is deleted in the background if the future is dropped, including
    /// while its create is in flight (found by its protected prefix).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for invalid options;
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when a request gets no
    /// answer within the operation timeout or the session ends while waiting;
    /// [`ErrorKind::Backend`](lock_core::ErrorKind::Backend) when ZooKeeper refuses (ACLs).
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        self.acquire_inner(name, options)
            .await
            .map_err(|error| error.with_lock(name))
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
    }
}
