//! The ZooKeeper lock service: one session at a time, any number of lock names.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use lock_core::backend::Deadline;
use lock_core::{AcquireOptions, LockName, Result};

use crate::ZkLockBuilder;
use crate::session::Session;
use crate::sessions::Sessions;
use crate::settings::Settings;
use crate::steps::ZkSteps;

/// Distributed locks on a ZooKeeper ensemble, over one session at a time.
///
/// Each lock name is a parent node `<root>/<escaped name>`; each acquisition creates an
/// ephemeral sequential child `_c_<uuid>-lock-<seq>` (Curator's InterProcessMutex layout), and
/// the lowest sequence holds. When the session ends a new one is opened on the next acquire;
/// holds of the old session are lost. Cheap to clone: clones share the session.
#[derive(Clone, Debug)]
pub struct ZkLock {
    pub(crate) steps: Arc<ZkSteps>,
    pub(crate) defaults: AcquireOptions,
}

impl ZkLock {
    /// A builder for the ensemble a `zk://[USER:PASSWORD@]HOST[:PORT][,...][/CHROOT][?...]` URL
    /// names; see the crate docs for its parameters.
    pub fn builder(url: &str) -> ZkLockBuilder {
        ZkLockBuilder::new(url)
    }

    pub(crate) async fn connect_with(settings: Settings) -> Result<Self> {
        let settings = Arc::new(settings);
        let session = Session::open(Arc::clone(&settings)).await?;
        Ok(Self {
            steps: Arc::new(ZkSteps {
                root: settings.root.clone(),
                server: settings.server.clone(),
                sessions: Sessions::new(Arc::clone(&settings), session),
                wakeups: AtomicU64::new(0),
                lone: Arc::default(),
                leases: lock_core::backend::Leases::default(),
            }),
            defaults: settings.service.defaults.clone(),
        })
    }

    /// The parent node of `name`'s lock nodes, relative to the chroot: `<root>/<escaped name>`.
    /// Point Curator's `InterProcessMutex` at this path to share the lock with Java services.
    pub fn lock_path(&self, name: &LockName) -> String {
        self.steps.parent(name)
    }

    /// The parent node of `name`'s read-write lock nodes: `<root>/<escaped name>/rw`. Point
    /// Curator's `InterProcessReadWriteLock` at this path to share the lock with Java services.
    pub fn rw_lock_path(&self, name: &LockName) -> String {
        self.steps.rw_parent(name)
    }

    /// The path of `name`'s election: a Curator `LeaderLatch` on it is a candidate of the
    /// same election. Its data counts the leaders (`<term> <epoch>`); distlock makes it a
    /// persistent node, so the count outlives gaps with no candidate.
    pub fn election_path(&self, name: &LockName) -> String {
        self.steps.election_parent(name)
    }

    /// The path of `name`'s semaphore: `<root>/<escaped name>/semaphore`, with its mutex under
    /// `locks/` and its lease nodes under `leases/`. Point Curator's `InterProcessSemaphoreV2`
    /// at this path to share the permits with Java services (with the same limit: Curator
    /// checks none).
    pub fn semaphore_path(&self, name: &LockName) -> String {
        self.steps.semaphore_path(name)
    }

    /// The ZooKeeper client of the current session (opening a new session if the last one
    /// ended), for other work on the same session.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a session being opened is left to the next caller.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable) when a new session must be
    /// opened and cannot be within the connect timeout.
    pub async fn client(&self) -> Result<zookeeper_client::Client> {
        let session = self.steps.sessions.session(Deadline::NEVER).await?;
        Ok(session.client().clone())
    }

    /// How many watch notifications on a predecessor node this service's waiters have received.
    /// With the herd-free recipe one release wakes one waiter.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn predecessor_wakeups(&self) -> u64 {
        self.steps
            .wakeups
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}
