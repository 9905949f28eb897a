//! The semaphore and read-write scripts and their invocations on one master.

use std::sync::LazyLock;
use std::time::Duration;

use lock_core::{Claim, Result};
use redis::Script;

use crate::error::unexpected_reply;
use crate::invocation::millis;
use crate::keys::{ClaimKeys, ClaimObject};
use crate::node::Node;
use crate::script_call::ScriptCall;
use crate::scripts::{Channels, PublishingScript};

static ACQUIRE: LazyLock<PublishingScript> =
    LazyLock::new(|| PublishingScript::new(include_str!("scripts/claim_acquire.lua")));
static RELEASE: LazyLock<PublishingScript> =
    LazyLock::new(|| PublishingScript::new(include_str!("scripts/claim_release.lua")));
static RENEW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/claim_renew.lua")));

/// What one run of the claim acquire script found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClaimAttempt {
    /// Ours, with this fencing token.
    Granted(u64),
    /// Not granted; the first blocking holder's lease ends in this long (`None`: only
    /// waiters ahead block).
    Waiting(Option<Duration>),
    /// The holders use this semaphore limit, not the one asked for.
    OtherLimit(u32),
}

/// The claim's letter in the scripts and its semaphore limit (`0` for read-write).
fn encode(claim: Claim) -> (&'static str, u32) {
    match claim {
        Claim::Permit { max_permits } => ("p", max_permits),
        Claim::Read => ("r", 0),
        _ => ("w", 0),
    }
}

/// One acquisition's side of a try: who, for how long, and whether it queues when refused.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClaimRequest<'a> {
    pub(crate) token: &'a str,
    pub(crate) label: &'a str,
    pub(crate) claim: Claim,
    pub(crate) lease: Duration,
    /// `Some(ttl)`: join or refresh the queue, the entry lasting `ttl` unrefreshed.
    pub(crate) queue: Option<Duration>,
}

/// The claim acquire script's invocation for `request` on `keys` (an election's grants are
/// announced on `channels`).
pub(crate) fn acquire_invocation(
    keys: &ClaimKeys,
    request: ClaimRequest<'_>,
    channels: Channels,
) -> ScriptCall {
    let (letter, limit) = encode(request.claim);
    let mut invocation = ScriptCall::new(ACQUIRE.on(channels), 9);
    invocation
        .key(&keys.holders)
        .key(&keys.info)
        .key(&keys.fence)
        .key(&keys.queue)
        .key(&keys.queue_claims)
        .key(&keys.queue_expiry)
        .key(&keys.limit)
        .key(&keys.term)
        .key(&keys.channel)
        .arg(request.token)
        .arg(millis(request.lease))
        .arg(letter)
        .arg(limit)
        .arg(u8::from(request.queue.is_some()))
        .arg(millis(request.queue.unwrap_or(Duration::ZERO)))
        .arg(request.label)
        .arg(u8::from(keys.object == ClaimObject::Election));
    invocation
}

/// Reads the claim acquire script's reply from `server`.
pub(crate) fn read_claim_attempt(reply: (i64, i64), server: &str) -> Result<ClaimAttempt> {
    match reply {
        (1, fence) if fence > 0 => Ok(ClaimAttempt::Granted(fence.unsigned_abs())),
        (0, -1) => Ok(ClaimAttempt::Waiting(None)),
        (0, ms) if ms >= 0 => Ok(ClaimAttempt::Waiting(Some(Duration::from_millis(
            ms.unsigned_abs(),
        )))),
        (-1, held) => Ok(ClaimAttempt::OtherLimit(u32::try_from(held).unwrap_or(0))),
        _ => Err(unexpected_reply(server, "the claim acquire script")),
    }
}

/// The claim release script's invocation for `token` on `keys` (it also leaves the queue);
/// it answers 1 when `token` held, and announces the release on `channels`.
pub(crate) fn release_invocation(keys: &ClaimKeys, token: &str, channels: Channels) -> ScriptCall {
    let mut invocation = ScriptCall::new(RELEASE.on(channels), 7);
    invocation
        .key(&keys.holders)
        .key(&keys.info)
        .key(&keys.queue)
        .key(&keys.queue_claims)
        .key(&keys.queue_expiry)
        .key(&keys.limit)
        .key(&keys.channel)
        .arg(token)
        .arg(u8::from(keys.object == ClaimObject::Election));
    invocation
}

impl Node {
    /// Runs the claim acquire script for `request` on `keys`.
    pub(crate) async fn acquire_claim(
        &self,
        keys: &ClaimKeys,
        request: ClaimRequest<'_>,
    ) -> Result<ClaimAttempt> {
        let invocation = acquire_invocation(keys, request, self.link().channels());
        let reply = self
            .link()
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        read_claim_attempt(reply, self.link().name())
    }

    /// Runs the claim release script (also: leaves the queue): `true` when `token` held.
    pub(crate) async fn release_claim(&self, keys: &ClaimKeys, token: &str) -> Result<bool> {
        let invocation = release_invocation(keys, token, self.link().channels());
        let held: i64 = self
            .link()
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(held == 1)
    }

    /// Runs the claim renew script: `true` when `token` still held and its lease is extended.
    pub(crate) async fn renew_claim(
        &self,
        keys: &ClaimKeys,
        token: &str,
        lease: Duration,
    ) -> Result<bool> {
        let mut invocation = ScriptCall::new(&RENEW, 3);
        invocation
            .key(&keys.holders)
            .key(&keys.info)
            .key(&keys.limit)
            .arg(token)
            .arg(millis(lease));
        let renewed: i64 = self
            .link()
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(renewed == 1)
    }
}
