//! The single-master lock service.

use std::sync::Arc;

use async_trait::async_trait;
use lock_core::{AcquireOptions, Capabilities, DistributedLock, LockGuard, LockName, Result};

use crate::builder::RedisLockBuilder;
use crate::error::BACKEND;
use crate::link::Link;
use crate::node::Node;
use crate::replicas::Replicas;
use crate::settings::Settings;
use crate::steps::Single;
use crate::subscriber::Subscriber;

/// A lock service on one Redis master (optionally with replicas it waits for).
///
/// Cheap to clone: clones share the connection, the pub/sub subscriber, and `with_lock`
/// re-entry.
#[derive(Clone, Debug)]
pub struct RedisLock {
    steps: Arc<Single>,
    defaults: AcquireOptions,
}

impl RedisLock {
    /// A builder for the master `url` names: `redis://[USER:PASSWORD@]HOST[:PORT][/DB]`, or
    /// `rediss://` for TLS; see the crate docs for its parameters.
    pub fn builder(url: &str) -> RedisLockBuilder<Self> {
        RedisLockBuilder::new(url)
    }

    pub(crate) async fn connect_with(settings: Settings) -> Result<Self> {
        let Settings {
            servers,
            service,
            prefix,
            waiter_ttl,
            replicas,
            allow_eviction,
        } = settings;
        let [server] = <[_; 1]>::try_from(servers).map_err(|servers| {
            lock_core::Error::invalid_input(format!(
                "{} hosts given for a single-master lock; use Redlock::builder for several masters",
                servers.len()
            ))
        })?;
        let link = Link::new(server, service.connect_timeout, service.operation_timeout);
        link.connect().await?;
        crate::eviction::check(&link, allow_eviction).await?;
        let subscriber = Subscriber::start(link.server().client.clone(), service.operation_timeout);
        let replicas = replicas.map(|(count, timeout)| Replicas::new(link.clone(), count, timeout));
        Ok(Self {
            steps: Arc::new(Single {
                node: Node::new(link),
                subscriber,
                prefix,
                replicas,
                waiter_ttl,
            }),
            defaults: service.defaults,
        })
    }

    /// The keys `name` maps to: `(lock key, fence counter, wake-up channel)`.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn keys_for(&self, name: &LockName) -> (String, String, String) {
        let keys = crate::keys::LockKeys::new(&self.steps.prefix, name);
        (keys.lock, keys.fence, keys.channel)
    }
}

#[async_trait]
impl DistributedLock for RedisLock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        lock_core::backend::acquire(&self.steps, name, options).await
    }

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .with_fencing()
            .with_lost_detection()
            .with_lease_renewal()
            .with_fair_fifo()
            .with_server_side_wait()
    }

    fn default_options(&self) -> AcquireOptions {
        self.defaults.clone()
    }

    fn service_identity(&self) -> usize {
        Arc::as_ptr(&self.steps) as usize
    }
}
