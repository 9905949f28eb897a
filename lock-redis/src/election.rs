//! Elections on one master: the leader is the one holder of the name's election object (a
//! write claim whose grants raise a term counter and announce themselves), read by a script
//! and followed through the object's channel.

use std::sync::LazyLock;

use futures_util::StreamExt;
use lock_core::{Leader, LeaderTicks, Result};
use redis::Script;

use crate::error::unexpected_reply;
use crate::keys::ClaimKeys;
use crate::node::Node;
use crate::script_call::ScriptCall;
use crate::scripts::PublishingScript;
use crate::subscriber::Subscriber;

static LEADER: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("scripts/elect_leader.lua")));
static RELABEL: LazyLock<PublishingScript> =
    LazyLock::new(|| PublishingScript::new(include_str!("scripts/claim_relabel.lua")));

/// The leader from the holder info `CLAIM FENCE GRANTED_MS LABEL` and the term counter;
/// `None` when the info is not in that shape.
fn read_leader(info: &str, term: &str) -> Option<Leader> {
    let mut fields = info.splitn(4, ' ');
    let (_claim, fence, _granted) = (fields.next()?, fields.next()?, fields.next()?);
    let label = fields.next().unwrap_or("");
    let epoch = fence.parse().ok()?;
    let term = term.parse().ok()?;
    Some(Leader::new(label, epoch).with_term(term))
}

impl Node {
    /// The leader of the election whose keys are `keys`, `None` while nobody leads.
    pub(crate) async fn leader(&self, keys: &ClaimKeys) -> Result<Option<Leader>> {
        let mut invocation = ScriptCall::new(&LEADER, 3);
        invocation
            .key(&keys.holders)
            .key(&keys.info)
            .key(&keys.term);
        let reply: Vec<String> = self
            .link()
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        match reply.as_slice() {
            [] => Ok(None),
            [info, term] => read_leader(info, term)
                .map(Some)
                .ok_or_else(|| unexpected_reply(self.link().name(), "the election leader script")),
            _ => Err(unexpected_reply(
                self.link().name(),
                "the election leader script",
            )),
        }
    }

    /// Replaces the label of `token`'s hold on `keys` while it holds: `false` when it no
    /// longer does.
    pub(crate) async fn relabel_claim(
        &self,
        keys: &ClaimKeys,
        token: &str,
        label: &str,
    ) -> Result<bool> {
        let mut invocation = ScriptCall::new(RELABEL.on(self.link().channels()), 3);
        invocation
            .key(&keys.holders)
            .key(&keys.info)
            .key(&keys.channel)
            .arg(token)
            .arg(label);
        let replaced: i64 = self
            .link()
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(replaced == 1)
    }
}

/// A tick on every message on the election's channel (grants, releases, new values) and on
/// every change of the subscription's health, so an observer re-reads after a reconnect.
/// The stream subscribes before it returns; it never ends (the subscriber reconnects).
pub(crate) async fn ticks(
    subscriber: &Subscriber,
    keys: &ClaimKeys,
    timeout: std::time::Duration,
) -> LeaderTicks {
    let subscription = subscriber.subscribe(&keys.channel, timeout).await;
    futures_util::stream::unfold(subscription, |mut subscription| async move {
        subscription.changed().await;
        Some(((), subscription))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leader_is_read_from_the_holder_info_and_the_term() {
        let leader = read_leader("w 1700000000000123 1700000000000 node-1 at 10.0.0.1", "7");
        assert_eq!(
            leader,
            Some(Leader::new("node-1 at 10.0.0.1", 1_700_000_000_000_123).with_term(7))
        );
        assert_eq!(
            read_leader("w 12 34 ", "1"),
            Some(Leader::new("", 12).with_term(1))
        );
        assert_eq!(read_leader("w x 34 a", "1"), None);
        assert_eq!(read_leader("w 12", "1"), None);
    }
}
