//! The lock scripts and their invocations: which keys and arguments each one takes.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::keys::LockKeys;
use crate::script_call::ScriptCall;
use crate::scripts::{Channels, PublishingScript};

static ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/acquire.lua")));
static RELEASE: LazyLock<PublishingScript> =
    LazyLock::new(|| PublishingScript::new(include_str!("scripts/release.lua")));
pub(crate) static RENEW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/renew.lua")));
pub(crate) static RAISE_FENCE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/raise_fence.lua")));
static INSPECT: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/inspect.lua")));
static FORCE_RELEASE: LazyLock<PublishingScript> =
    LazyLock::new(|| PublishingScript::new(include_str!("scripts/force_release.lua")));

/// Who acquires: the owner token the lock key will start with, and the owner label it carries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Owner<'a> {
    pub(crate) token: &'a str,
    pub(crate) label: &'a str,
}

/// What a grant does with the fence it computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fence {
    /// Stores it in the counter: it is the hold's fencing token (a single master).
    Take,
    /// Only proposes it: a Redlock stores the fence its majority agrees on afterwards, so a
    /// master whose grant came too late to count keeps a counter no hold was given.
    Propose,
}

/// What an acquire that is not granted leaves on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waiting<'a> {
    /// Nothing: a single try.
    No,
    /// A place in the waiter queue, kept `ttl` without a refresh; with `handoff`, the release
    /// that makes it first in line grants it the lock directly (no replica must acknowledge
    /// the grant first).
    Queue { ttl: Duration, handoff: bool },
    /// A count as a polling waiter (Redlock) under `id`, kept `ttl` without a refresh; never a
    /// place in the queue. `counted`: an earlier round may have counted it, so a grant drops
    /// that count.
    Poll {
        id: &'a str,
        ttl: Duration,
        counted: bool,
    },
}

/// The acquire script's invocation for `owner` on `keys`.
pub(crate) fn acquire(
    keys: &LockKeys,
    owner: Owner<'_>,
    lease: Duration,
    waiting: Waiting<'_>,
    fence: Fence,
) -> ScriptCall {
    let (mode, ttl, id, handoff) = match waiting {
        Waiting::No => ("0", Duration::ZERO, "", false),
        Waiting::Queue { ttl, handoff } => ("1", ttl, "", handoff),
        Waiting::Poll { id, ttl, counted } => (if counted { "3" } else { "2" }, ttl, id, false),
    };
    let mut invocation = ScriptCall::new(&ACQUIRE, 5);
    invocation
        .key(keys.lock())
        .key(keys.fence())
        .key(keys.queue())
        .key(keys.queue_expiry())
        .key(keys.queue_terms())
        .arg(owner.token)
        .arg(millis(lease))
        .arg(mode)
        .arg(millis(ttl))
        .arg(owner.label)
        .arg(id)
        .arg(u8::from(fence == Fence::Take))
        .arg(u8::from(handoff));
    invocation
}

/// How a release reaches the first waiter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wake<'a> {
    /// `PUBLISH` or `SPUBLISH`.
    pub(crate) channels: Channels,
    /// The prefix of the services' inboxes (see [`crate::inbox`]); `""`: each waiter has a
    /// channel of its own under the lock's hash tag.
    pub(crate) inboxes: &'a str,
}

/// The release script's invocation for `token` on `keys`; `poller` also drops that polling
/// waiter's count. It wakes the first waiter as `wake` says.
pub(crate) fn release(
    keys: &LockKeys,
    token: &str,
    poller: Option<&str>,
    wake: Wake<'_>,
) -> ScriptCall {
    let mut invocation = ScriptCall::new(RELEASE.on(wake.channels), 6);
    invocation
        .key(keys.lock())
        .key(keys.channel())
        .key(keys.queue())
        .key(keys.queue_expiry())
        .key(keys.queue_terms())
        .key(keys.fence())
        .arg(token)
        .arg(wake.inboxes);
    if let Some(poller) = poller {
        invocation.arg(poller);
    }
    invocation
}

/// The read-only inspect script's invocation on `keys`.
pub(crate) fn inspect(keys: &LockKeys) -> ScriptCall {
    let mut invocation = ScriptCall::new(&INSPECT, 3);
    invocation
        .key(keys.lock())
        .key(keys.fence())
        .key(keys.queue_expiry());
    invocation
}

/// The force-release script's invocation for the hold with `fence` on `keys`, waking the
/// first waiter as `wake` says.
pub(crate) fn force_release(keys: &LockKeys, fence: u64, wake: Wake<'_>) -> ScriptCall {
    let mut invocation = ScriptCall::new(FORCE_RELEASE.on(wake.channels), 4);
    invocation
        .key(keys.lock())
        .key(keys.fence())
        .key(keys.channel())
        .key(keys.queue())
        .arg(fence)
        .arg(wake.inboxes);
    invocation
}

/// A duration in whole milliseconds, at least 1.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}
