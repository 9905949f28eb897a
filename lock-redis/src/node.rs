//! One Redis master as the lock scripts see it: acquire, release, renew, raise the fence.

use std::sync::LazyLock;
use std::time::Duration;

use lock_core::Result;
use redis::Script;

use crate::error::unexpected_reply;
use crate::keys::LockKeys;
use crate::link::Link;

static ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/acquire.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/release.lua")));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("scripts/renew.lua")));
static RAISE_FENCE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/raise_fence.lua")));

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
}

/// The acquire script's invocation for `token` on `keys`.
pub(crate) fn acquire_invocation<'a>(
    keys: &LockKeys,
    token: &str,
    lease: Duration,
    queue_ttl: Option<Duration>,
) -> redis::ScriptInvocation<'a> {
    let mut invocation = ACQUIRE.prepare_invoke();
    invocation
        .key(&keys.lock)
        .key(&keys.fence)
        .key(&keys.queue)
        .key(&keys.queue_expiry)
        .arg(token)
        .arg(millis(lease))
        .arg(u8::from(queue_ttl.is_some()))
        .arg(queue_ttl.map_or(0, millis));
    invocation
}

/// The release script's invocation for `token` on `keys`.
pub(crate) fn release_invocation<'a>(keys: &LockKeys, token: &str) -> redis::ScriptInvocation<'a> {
    let mut invocation = RELEASE.prepare_invoke();
    invocation
        .key(&keys.lock)
        .key(&keys.channel)
        .key(&keys.queue)
        .key(&keys.queue_expiry)
        .arg(token);
    invocation
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
        Self { link }
    }

    pub(crate) fn link(&self) -> &Link {
        &self.link
    }

    /// Runs the acquire script: `SET NX PX` unless an earlier waiter is queued, and on success
    /// the next fence. When not granted and `queue_ttl` is given, joins (or refreshes its place
    /// in) the waiter queue for that long.
    pub(crate) async fn acquire(
        &self,
        keys: &LockKeys,
        token: &str,
        lease: Duration,
        queue_ttl: Option<Duration>,
    ) -> Result<Attempt> {
        let invocation = acquire_invocation(keys, token, lease, queue_ttl);
        let reply = self
            .link
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        read_attempt(reply, self.link.name())
    }

    /// Runs the release script, which also takes `token` out of the waiter queue: `true` when
    /// the lock was ours and is deleted.
    pub(crate) async fn release(&self, keys: &LockKeys, token: &str) -> Result<bool> {
        let invocation = release_invocation(keys, token);
        let (ours, _receivers): (i64, i64) = self
            .link
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(ours == 1)
    }

    /// Runs the renew script: `true` when the lease was extended, `false` when not ours.
    pub(crate) async fn renew(
        &self,
        keys: &LockKeys,
        token: &str,
        lease: Duration,
    ) -> Result<bool> {
        let mut invocation = RENEW.key(&keys.lock);
        invocation.arg(token).arg(millis(lease));
        let reply: i64 = self
            .link
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(reply == 1)
    }

    /// Raises the fence counter to at least `fence` (Redlock keeps counters in step).
    pub(crate) async fn raise_fence(&self, keys: &LockKeys, fence: u64) -> Result<()> {
        let mut invocation = RAISE_FENCE.key(&keys.fence);
        invocation.arg(fence);
        let _: i64 = self
            .link
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(())
    }
}

/// A duration in whole milliseconds, at least 1.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}
