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
    waiter_ttl: Duration,
}

impl RedisLock {
    /// A builder for the master at `url`.
    pub fn builder(url: &str) -> RedisLockBuilder {
        RedisLockBuilder::new(url)
    }

    pub(crate) async fn connect_with(config: RedisLockBuilder) -> Result<Self> {
        let url = config.urls.first().map(String::as_str).unwrap_or_default();
        let node = Node::connect(config.target(url)).await?;
        let subscriber = Subscriber::start(node.client().clone(), config.command_timeout);
        Ok(Self {
            inner: Arc::new(Inner {
                node,
                subscriber,
                prefix: config.key_prefix,
                replicas: config.replicas,
                waiter_ttl: config.waiter_ttl,
            }),
        })
    }

    /// The keys `name` maps to: `(lock key, fence counter, wake-up channel)`. Other clients
    /// may take the lock with a plain `SET <lock key> <value> NX PX <ms>`.
    pub fn keys_for(&self, name: &LockName) -> (String, String, String) {
        let keys = LockKeys::new(&self.inner.prefix, name);
        (keys.lock, keys.fence, keys.channel)
    }

    /// After a grant: waits for replicas if asked to, then builds the guard.
    async fn granted(
        &self,
        name: &LockName,
        held: SingleHeld,
        fence: u64,
        granted_at: Instant,
        options: &AcquireOptions,
    ) -> Result<LockGuard> {
        if let Some((replicas, timeout)) = self.inner.replicas {
            let acknowledged = held.node.wait_replicas(replicas, timeout).await?;
            if acknowledged < replicas as u64 {
                let outcome = match held.node.release(&held.keys, &held.token).await {
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
        Ok(LockGuard::builder(name.clone(), fence, Arc::new(held))
            .backend(BACKEND)
            .lease(granted_at, options.lease, options.auto_renew)
            .build())
    }

    async fn wait_loop(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let node = &self.inner.node;
        let keys = LockKeys::new(&self.inner.prefix, name);
        let token = new_token();
        // Waiting acquisitions queue; a single try only checks that nobody queued first.
        let queue_ttl = (options.wait != Some(Duration::ZERO)).then_some(self.inner.waiter_ttl);
        let deadline = options.wait.map(|wait| Instant::now() + wait);
        // Armed for the whole acquisition: a dropped future leaves neither a lock nor a queue
        // entry behind (the release script does both, and only for this token).
        let cleanup = ArmedCleanup::arm(std::slice::from_ref(node), &keys, &token);
        let mut subscription: Option<Subscription> = None;
        let mut polls = 0;
        loop {
            let granted_at = Instant::now();
            let hint = match node
                .acquire(&keys, &token, options.lease, queue_ttl)
                .await?
            {
                Attempt::Held(hint) => hint,
                Attempt::Granted(fence) => {
                    // This branch returns: the hold takes the keys and token, no copies.
                    let held = SingleHeld {
                        node: node.clone(),
                        keys,
                        token,
                    };
                    let guard = self.granted(name, held, fence, granted_at, options).await?;
                    cleanup.disarm();
                    return Ok(Some(guard));
                }
            };
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                // Leave the queue now, so nobody waits for an entry that will not try. If that
                // fails, the still armed cleanup tries again in the background (and the entry
                // expires after the waiter ttl regardless).
                if queue_ttl.is_none() || node.release(&keys, &token).await.is_ok() {
                    cleanup.disarm();
                }
                return Ok(None);
            }
            let Some(subscription) = subscription.as_mut() else {
                // Subscribe before the next try, so a release between them is not missed.
                let registered = self
                    .inner
                    .subscriber
                    .subscribe(&keys.channel, node.timeout());
                subscription = Some(registered.await);
                continue;
            };
            // The fallback timer: the key's expiry (crashed holders, lost messages, plain
            // `SET NX` holders that never publish), and refreshing our place in the queue.
            let mut sleep = hint.map_or(options.backoff.max(), |hint| {
                hint + Duration::from_millis(1)
            });
            sleep = sleep.min(self.inner.waiter_ttl / 3);
            if !subscription.live() {
                sleep = sleep.min(options.backoff.delay(polls));
                polls += 1;
            }
            let mut wake_at = now + sleep;
            if let Some(deadline) = deadline {
                wake_at = wake_at.min(deadline);
            }
            loop {
                tokio::select! {
                    wake = subscription.changed() => {
                        // A release names the first queued waiter; the others sleep on.
                        let next = wake.next.as_deref();
                        if next.is_none_or(|next| next.is_empty() || next == token) {
                            break;
                        }
                    }
                    () = tokio::time::sleep_until(wake_at) => break,
                }
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
            .with_fair_fifo()
            .with_server_side_wait()
    }
}
