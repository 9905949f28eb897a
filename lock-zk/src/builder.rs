//! The builder: a `zk://` URL, the options every service shares, and ZooKeeper's own.

use std::fmt;
use std::time::Duration;

use lock_core::Result;
use lock_core::backend::{ServiceBuilder, ServiceOptions};
use lock_core::url::redact;

use crate::settings::{Settings, ZkOptions};
use crate::{ZkAcl, ZkLock};

/// Configures and connects a [`ZkLock`]: start with [`ZkLock::builder`].
///
/// Every setting can also come from the URL (`session_timeout`, `root`, `acl`, and the shared
/// parameters of [`ServiceBuilder`]); a builder method overrides the URL. `Debug` hides the
/// digest password.
#[derive(Clone)]
pub struct ZkLockBuilder {
    url: String,
    service: ServiceOptions,
    zk: ZkOptions,
}

impl ZkLockBuilder {
    pub(crate) fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            service: ServiceOptions::default(),
            zk: ZkOptions::default(),
        }
    }

    /// The session timeout to ask for (default 10 s; the server clamps it to 2 to 20 ticks;
    /// URL `session_timeout`): how long the ensemble keeps a silent client's nodes, and so the
    /// lease of every hold.
    #[must_use]
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.zk.session_timeout = Some(timeout);
        self
    }

    /// The parent of every lock's node, below the chroot (default `/distlock`; URL `root`).
    #[must_use]
    pub fn root(mut self, root: impl Into<String>) -> Self {
        self.zk.root = Some(root.into());
        self
    }

    /// The ACL of created nodes (default [`ZkAcl::Open`]; URL `acl`).
    #[must_use]
    pub fn acl(mut self, acl: ZkAcl) -> Self {
        self.zk.acl = Some(acl);
        self
    }

    /// Establishes a session with the ensemble.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the connection attempt; nothing is created on
    /// the server except the chroot node.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](lock_core::ErrorKind::InvalidInput) for a malformed URL or
    /// option (before any I/O); [`ErrorKind::Unavailable`](lock_core::ErrorKind::Unavailable)
    /// when no session is established within the connect timeout;
    /// [`ErrorKind::Backend`](lock_core::ErrorKind::Backend) when the chroot cannot be created
    /// (for example, no permission).
    pub async fn connect(self) -> Result<ZkLock> {
        let settings = Settings::resolve(&self.url, &self.service, &self.zk)?;
        ZkLock::connect_with(settings).await
    }
}

impl ServiceBuilder for ZkLockBuilder {
    fn service_options(&mut self) -> &mut ServiceOptions {
        &mut self.service
    }
}

impl fmt::Debug for ZkLockBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZkLockBuilder")
            .field("url", &redact(&self.url))
            .field("service", &self.service)
            .field("session_timeout", &self.zk.session_timeout)
            .field("root", &self.zk.root)
            .field("acl", &self.zk.acl)
            .finish()
    }
}
