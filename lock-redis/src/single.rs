//! The single-master lock service.

use std::sync::Arc;

use async_trait::async_trait;
use lock_core::{
    AcquireOptions, Capabilities, Claim, DistributedLock, Leader, LeaderTicks, LockGuard, LockName,
    LockStatus, Result,
};

use crate::builder::RedisLockBuilder;
use crate::claim_steps::{ClaimSteps, claim_object};
use crate::error::BACKEND;
use crate::inbox::{self, Inbox};
use crate::keys::{ClaimKeys, ClaimObject, LockKeys};
use crate::link::Link;
use crate::node::Node;
use crate::replicas::Replicas;
use crate::scripts::Channels;
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
    /// A builder for the master `url` names: `redis://[USER:PASSWORD@]HOST[:PORT][/DB]`
    /// (`rediss://` for TLS), a cluster (`redis+cluster://HOST:PORT,HOST:PORT`) or the master
    /// of a set of Sentinels (`redis+sentinel://HOST:PORT,HOST:PORT/MASTER`); see the crate
    /// docs for the parameters.
    pub fn builder(url: &str) -> RedisLockBuilder<Self> {
        RedisLockBuilder::new(url)
    }

    pub(crate) async fn connect_with(settings: Settings) -> Result<Self> {
        let Settings {
            servers,
            service,
            topology: _,
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
        // A cluster's scripts publish only on their lock's slot: no inboxes there.
        let inboxes = (link.channels() == Channels::Plain).then(|| inbox::channel_prefix(&prefix));
        let inbox = inboxes.as_ref().map(|_| Inbox::new(&prefix));
        let subscriber = Subscriber::start(link.server().clone(), service.operation_timeout, inbox);
        let replicas = replicas.map(|(count, timeout)| Replicas::new(link.clone(), count, timeout));
        Ok(Self {
            steps: Arc::new(Single {
                node: Node::new(link).with_inboxes(inboxes.as_deref().unwrap_or_default()),
                subscriber,
                prefix,
                replicas,
                waiter_ttl,
                leases: lock_core::backend::Leases::default(),
            }),
            defaults: service.defaults,
        })
    }

    /// How many round trips the renewals of this service's holds have taken: one per batch of
    /// renewals gathered together.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn renewal_round_trips(&self) -> u64 {
        self.steps.node.renewal_round_trips()
    }

    /// The keys `name` maps to: `(lock key, fence counter, wake-up channel)`.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn keys_for(&self, name: &LockName) -> (String, String, String) {
        let keys = LockKeys::new(&self.steps.prefix, name);
        let lock = keys.lock().to_owned();
        (lock, keys.fence().to_string(), keys.channel().to_string())
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

    /// Semaphore permits and read-write holds: holders in a sorted set by lease end, waiters
    /// in a queue, both under the name's hash tag and apart from its mutex keys; one script
    /// per grant, release and renewal; releases publish on the object's channel. With
    /// `wait_for_replicas`, a grant is acknowledged by the replicas as a mutex grant is (on a
    /// connection of its own), or released again and refused.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`acquire_with`](DistributedLock::acquire_with).
    ///
    /// # Errors
    ///
    /// As [`acquire_with`](DistributedLock::acquire_with) (`Unavailable` when too few replicas
    /// acknowledge a grant), plus `InvalidInput` for a semaphore limit other than the holders'.
    async fn acquire_claim_with(
        &self,
        name: &LockName,
        claim: Claim,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        claim.validate()?;
        let steps = Arc::new(ClaimSteps {
            single: Arc::clone(&self.steps),
            claim,
            object: claim_object(claim),
        });
        lock_core::backend::acquire(&steps, name, options).await
    }

    /// A leadership is a write claim on the name's election object (`{PREFIX:NAME}:elect:*`)
    /// whose grant raises the election's term counter and publishes on its channel, as do
    /// releases and new values; the published value is the holder's label. Replicas
    /// acknowledge grants as for a semaphore.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`acquire_with`](DistributedLock::acquire_with).
    ///
    /// # Errors
    ///
    /// As [`acquire_claim_with`](DistributedLock::acquire_claim_with).
    async fn campaign_with(
        &self,
        name: &LockName,
        options: &AcquireOptions,
    ) -> Result<Option<LockGuard>> {
        let steps = Arc::new(ClaimSteps {
            single: Arc::clone(&self.steps),
            claim: Claim::Write,
            object: ClaimObject::Election,
        });
        lock_core::backend::acquire(&steps, name, options).await
    }

    /// The election's holder whose lease has not ended by the server clock, with the term
    /// counter, read in one script.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the master does not answer within the operation timeout, `Backend`
    /// when it answers with an error.
    async fn read_leader(&self, name: &LockName) -> Result<Option<Leader>> {
        let keys = ClaimKeys::new(&self.steps.prefix, name, ClaimObject::Election);
        let leader = self.steps.node.leader(&keys).await;
        leader.map_err(|error| error.with_operation("leader"))
    }

    /// Ticks on the election's channel through the service's shared subscriber. A lease that
    /// ends unrenewed is announced by the next grant, not by itself: observers notice a
    /// leaderless gap by their poll.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future or the stream unsubscribes.
    ///
    /// # Errors
    ///
    /// None: while the subscription is not confirmed (within the operation timeout) observers
    /// poll.
    async fn watch_leader(&self, name: &LockName) -> Result<LeaderTicks> {
        let keys = ClaimKeys::new(&self.steps.prefix, name, ClaimObject::Election);
        let timeout = self.steps.node.link().timeout();
        Ok(crate::election::ticks(&self.steps.subscriber, &keys, timeout).await)
    }

    /// The holder from the lock key's value (`OWNER_TOKEN GRANTED_MS LABEL`) and the fence
    /// counter, its lease left from `PTTL`, and the waiters whose queue entries are live, read
    /// in one script. A key a plain `SET NX` client holds shows its value as the owner label,
    /// with fencing token 0 and no grant time.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the master does not answer within the operation timeout, `Backend`
    /// when it answers with an error.
    async fn inspect(&self, name: &LockName) -> Result<LockStatus> {
        let keys = LockKeys::new(&self.steps.prefix, name);
        let status = self.steps.node.inspect(&keys).await;
        let status = status.map_err(|error| error.with_operation("inspect"))?;
        let holders = status
            .holder
            .map(|holder| holder.info)
            .into_iter()
            .collect();
        Ok(LockStatus::new(holders, status.waiters))
    }

    /// The held names under `prefix`: `SCAN` over the lock keys (`MATCH {PREFIX:NAME_PREFIX*}`),
    /// one command per batch of keys.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the master does not answer a `SCAN` within the operation timeout,
    /// `Backend` when it answers with an error (a user not allowed to `SCAN`, for one).
    async fn list(&self, prefix: &str) -> Result<Vec<LockName>> {
        let names = self.steps.node.held_names(&self.steps.prefix, prefix).await;
        names.map_err(|error| error.with_operation("list"))
    }

    /// Deletes the lock key in one script if it is held and the fence counter is
    /// `fencing_token` (only grants raise it, so it is the live hold's token), and wakes the
    /// first queued waiter as a release does.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the script runs whole or not at all.
    ///
    /// # Errors
    ///
    /// `Unavailable` when the master does not answer within the operation timeout (the script
    /// may still have run), `Backend` when it answers with an error.
    async fn force_release(&self, name: &LockName, fencing_token: u64) -> Result<bool> {
        let keys = LockKeys::new(&self.steps.prefix, name);
        let released = self.steps.node.force_release(&keys, fencing_token).await;
        released.map_err(|error| error.with_operation("force_release"))
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
            .with_semaphore()
            .with_rw_lock()
            .with_election()
    }

    fn default_options(&self) -> AcquireOptions {
        self.defaults.clone()
    }

    fn service_identity(&self) -> usize {
        Arc::as_ptr(&self.steps) as usize
    }
}
