//! The single-master lock: acquire script, pub/sub waiting, optional replica acknowledgement.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lock_core::{
    AcquireOptions, Capabilities, DistributedLock, Error, ErrorKind, LockGuard, LockName, Result,
};
use tokio::time::Instant;

use crate::cleanup::ArmedCleanup;
use crate::config::RedisLockBuilder;
use crate::error::BACKEND;
use crate::held::SingleHeld;
use crate::keys::LockKeys;
use crate::node::{Attempt, Node};
use crate::subscriber::{Subscriber, Subscription};
use crate::token::new_token;

/// A lock service on one Redis master (optionally with replicas it waits for).
///
/// Cheap to clone: clones share the connection and the pub/sub subscriber.
#[derive(Clone, Debug)]
pub struct RedisLock {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    node: Node,
    subscriber: Subscriber,
    prefix: String,
    replicas: Option<(usize, Duration)>,
}

impl RedisLock {
    /// A builder for the master at `url`.
    pub fn builder(url: &str) -> RedisLockBuilder {
        RedisLockBuilder::new(url)
    }

    pub(crate) async fn connect_with(config: RedisLockBuilder) -> Result<Self> {
        let url = config.urls.first().map(String::as_str).unwrap_or_default();
        let node = Node::connect(url, config.connect_timeout, config.command_timeout).await?;
        let subscriber = Subscriber::start(node.client().clone(), config.command_timeout);
        Ok(Self {
            inner: Arc::new(Inner {
                node,
                subscriber,
                prefix: config.key_prefix,
                replicas: config.replicas,
            }),
        })
    }

    /// The keys `name` maps to: `(lock key, fence counter, wake-up channel)`. Other clients
    /// may take the lock with a plain `SET <lock key> <value> NX PX <ms>`.
    pub fn keys_for(&self, name: &LockName) -> (String, String, String) {
        let keys = LockKeys::new(&self.inner.prefix, name);
        (keys.lock, keys.fence, keys.channel)
    }

    /// Runs one acquire script; on a grant, waits for replicas and builds the guard.
    async fn attempt(
        &self,
        name: &LockName,
        keys: &LockKeys,
        options: &AcquireOptions,
    ) -> Result<Result<LockGuard, Option<Duration>>> {
        let node = &self.inner.node;
        let token = new_token();
        let granted_at = Instant::now();
        let cleanup = ArmedCleanup::arm(std::slice::from_ref(node), keys, &token);
        let fence = match node.acquire(keys, &token, options.lease).await? {
            Attempt::Held(pttl) => {
                cleanup.disarm();
                return Ok(Err(pttl));
            }
            Attempt::Granted(fence) => fence,
        };
        if let Some((replicas, timeout)) = self.inner.replicas {
            let acknowledged = node.wait_replicas(replicas, timeout).await?;
            if acknowledged < replicas as u64 {
                let released = node.release(keys, &token).await;
                cleanup.disarm();
                let outcome = match released {
                    Ok(_) => "the lock was released",
                    Err(_) => "releasing it failed too, so its lease will end it",
                };
                return Err(Error::new(
                    ErrorKind::Unavailable,
                    format!(
                        "only {acknowledged} of the {replicas} required replicas acknowledged the \
                         lock within {timeout:?}; a failover could hand it to a second holder, so \
                         {outcome}"
                    ),
                ));
            }
        }
        let held = SingleHeld {
            node: node.clone(),
            keys: keys.clone(),
            token,
        };
        let guard = LockGuard::builder(name.clone(), fence, Arc::new(held))
            .backend(BACKEND)
            .lease(granted_at, options.lease, options.auto_renew)
            .build();
        cleanup.disarm();
        Ok(Ok(guard))
    }

    async fn wait_loop(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let keys = LockKeys::new(&self.inner.prefix, name);
        let deadline = options.wait.map(|wait| Instant::now() + wait);
        let mut subscription: Option<Subscription> = None;
        let mut polls = 0;
        loop {
            let pttl = match self.attempt(name, &keys, options).await? {
                Ok(guard) => return Ok(Some(guard)),
                Err(pttl) => pttl,
            };
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return Ok(None);
            }
            let Some(subscription) = subscription.as_mut() else {
                // Subscribe before the next try, so a release between them is not missed.
                let node = &self.inner.node;
                let registered = self
                    .inner
                    .subscriber
                    .subscribe(&keys.channel, node.timeout());
                subscription = Some(registered.await);
                continue;
            };
            // The fallback timer: the key's expiry covers crashed holders and lost messages.
            let mut sleep = match pttl {
                Some(pttl) => pttl + Duration::from_millis(1),
                None => options.backoff.max(),
            };
            if !subscription.live() {
                sleep = sleep.min(options.backoff.delay(polls));
                polls += 1;
            }
            if let Some(deadline) = deadline {
                sleep = sleep.min(deadline - now);
            }
            tokio::select! {
                () = subscription.changed() => {}
                () = tokio::time::sleep(sleep) => {}
            }
        }
    }
}

#[async_trait]
impl DistributedLock for RedisLock {
    async fn acquire_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        options.validate()?;
        self.wait_loop(name, options).await.map_err(|error| {
            error
                .with_backend(BACKEND)
                .with_operation("acquire")
                .with_lock(name)
        })
    }

    fn backend(&self) -> &'static str {
        BACKEND
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
            .with_fencing()
            .with_lost_detection()
            .with_lease_renewal()
            .with_server_side_wait()
    }
}
