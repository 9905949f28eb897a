//! One Redis master as the lock scripts see it: acquire, release, renew, raise the fence.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lock_core::Result;
use lock_core::backend::Sending;

use crate::error::{BACKEND, unexpected_reply};
use crate::invocation::{self, Fence, Owner, RAISE_FENCE, Waiting, Wake};
use crate::keys::LockKeys;
use crate::link::Link;
use crate::renewals::{self, Renewals};
use crate::script_call::ScriptCall;

/// What one acquire script run found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Ours now, with this fencing token.
    Granted(u64),
    /// Held elsewhere; the key expires in this long (`None`: it has no expiry).
    Held(Option<Duration>),
}

/// A master: its link and the scripts. Cheap to clone; clones share the connection.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    link: Link,
    /// The prefix of the services' inboxes a release wakes a waiter in (see
    /// [`crate::inbox`]); empty where waiters have channels of their own.
    inboxes: Arc<str>,
    renewals: Renewals,
    /// Round trips taken by renewals.
    renewal_round_trips: Arc<AtomicU64>,
}

/// Reads the acquire script's reply.
pub(crate) fn read_attempt(reply: (i64, i64), server: &str) -> Result<Attempt> {
    match reply {
        (1, fence) if fence > 0 => Ok(Attempt::Granted(fence as u64)),
        (0, wait) if wait >= 0 => Ok(Attempt::Held(Some(Duration::from_millis(wait as u64)))),
        (0, -1) => Ok(Attempt::Held(None)),
        // -2: no key, yet not granted; cannot happen within one script. Retry soon.
        (0, _) => Ok(Attempt::Held(Some(Duration::ZERO))),
        _ => Err(unexpected_reply(server, "the acquire script")),
    }
}

impl Node {
    pub(crate) fn new(link: Link) -> Self {
        Self {
            link,
            inboxes: Arc::from(""),
            renewals: renewals::renewals(),
            renewal_round_trips: Arc::default(),
        }
    }

    /// The same master, whose releases wake waiters in the inboxes under `inboxes`.
    pub(crate) fn with_inboxes(mut self, inboxes: &str) -> Self {
        self.inboxes = Arc::from(inboxes);
        self
    }

    pub(crate) fn link(&self) -> &Link {
        &self.link
    }

    /// How this master's releases wake the first waiter.
    pub(crate) fn wake(&self) -> Wake<'_> {
        Wake {
            channels: self.link.channels(),
            inboxes: &self.inboxes,
        }
    }

    /// How many round trips this master's renewals have taken.
    #[cfg(feature = "testing")]
    pub(crate) fn renewal_round_trips(&self) -> u64 {
        self.renewal_round_trips.load(Ordering::Relaxed)
    }

    /// Runs the acquire script: `SET NX PX` (the value: `owner`'s token, the server time, its
    /// label) unless an earlier waiter is queued, and on success the next fence (taken or
    /// proposed, as `fence` says). When not granted, leaves what `waiting` says: a place in
    /// the waiter queue, or a poller's count.
    pub(crate) async fn acquire(
        &self,
        keys: &LockKeys,
        owner: Owner<'_>,
        lease: Duration,
        waiting: Waiting<'_>,
        fence: Fence,
    ) -> Result<Attempt> {
        let invocation = invocation::acquire(keys, owner, lease, waiting, fence);
        let reply = self
            .link
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        read_attempt(reply, self.link.name())
    }

    /// Runs the release script, which also takes `token` out of the waiter queue: `true` when
    /// the lock was ours and is deleted.
    pub(crate) async fn release(&self, keys: &LockKeys, token: &str) -> Result<bool> {
        self.release_counted(keys, token, None).await
    }

    /// [`release`](Self::release), also dropping the count of polling waiter `poller`.
    pub(crate) async fn release_counted(
        &self,
        keys: &LockKeys,
        token: &str,
        poller: Option<&str>,
    ) -> Result<bool> {
        let invocation = invocation::release(keys, token, poller, self.wake());
        let (ours, _receivers): (i64, i64) = self
            .link
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(ours == 1)
    }

    /// Runs the renew script: `true` when the lease was extended, `false` when not ours.
    /// Gathered, the renewals of this master's holds asked for within a few milliseconds of
    /// each other go out together, as one round trip (see [`renewals`]); at once, alone.
    pub(crate) async fn renew(
        &self,
        lock: &str,
        token: &str,
        lease: Duration,
        sending: Sending,
    ) -> Result<bool> {
        let (link, round_trips) = (self.link.clone(), Arc::clone(&self.renewal_round_trips));
        let renewal = renewals::renewal(lock, token, lease);
        let run = move |batch| {
            round_trips.fetch_add(1, Ordering::Relaxed);
            renewals::renew_all(link, batch)
        };
        match self.renewals.send(renewal, sending, run).await {
            Some(renewed) => renewed,
            None => Err(lock_core::Error::new(
                lock_core::ErrorKind::Backend,
                "the renewal batch ended without an answer",
            )
            .with_backend(BACKEND)),
        }
    }

    /// Raises the fence counter to at least `fence` (Redlock keeps counters in step).
    pub(crate) async fn raise_fence(&self, keys: &LockKeys, fence: u64) -> Result<()> {
        let mut invocation = ScriptCall::new(&RAISE_FENCE, 1);
        invocation.key(keys.fence()).arg(fence);
        let _: i64 = self
            .link
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(())
    }

    /// Drops the count of polling waiter `poller` (`ZREM`), once it no longer waits.
    pub(crate) async fn uncount(&self, keys: &LockKeys, poller: &str) -> Result<()> {
        let mut command = redis::cmd("ZREM");
        command.arg(keys.queue_expiry()).arg(poller);
        let _: i64 = self
            .link
            .run(|mut connection| async move { command.query_async(&mut connection).await })
            .await?;
        Ok(())
    }
}
