//! The Lua scripts that announce releases, each built twice: with `PUBLISH` for a single
//! server, and with `SPUBLISH` for a Redis Cluster, where a sharded message stays on the shard
//! that owns the lock's slot instead of crossing the whole cluster bus.

use redis::Script;

/// How a deployment carries wake-ups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Channels {
    /// `PUBLISH` and `SUBSCRIBE`.
    Plain,
    /// `SPUBLISH` and `SSUBSCRIBE` (Redis 7), routed by the channel's hash tag.
    Sharded,
}

/// A script that publishes, in both builds.
#[derive(Debug)]
pub(crate) struct PublishingScript {
    plain: Script,
    sharded: Script,
}

/// How the script sources publish; each occurrence becomes `SPUBLISH` in the sharded build.
const PUBLISH: &str = "redis.call('PUBLISH'";

impl PublishingScript {
    /// Both builds of `source`, which publishes with `redis.call('PUBLISH', ...)`.
    pub(crate) fn new(source: &str) -> Self {
        debug_assert!(source.contains(PUBLISH), "the script never publishes");
        Self {
            plain: Script::new(source),
            sharded: Script::new(&source.replace(PUBLISH, "redis.call('SPUBLISH'")),
        }
    }

    /// The build for `channels`.
    pub(crate) fn on(&self, channels: Channels) -> &Script {
        match channels {
            Channels::Plain => &self.plain,
            Channels::Sharded => &self.sharded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sharded_build_publishes_only_with_spublish() {
        let script = PublishingScript::new(
            "redis.call('PUBLISH', KEYS[1], '') return redis.call('PUBLISH', KEYS[1], 'x')",
        );
        assert_ne!(
            script.on(Channels::Plain).get_hash(),
            script.on(Channels::Sharded).get_hash()
        );
        for source in [
            include_str!("scripts/release.lua"),
            include_str!("scripts/force_release.lua"),
            include_str!("scripts/claim_acquire.lua"),
            include_str!("scripts/claim_release.lua"),
            include_str!("scripts/claim_relabel.lua"),
        ] {
            let sharded = source.replace(PUBLISH, "redis.call('SPUBLISH'");
            assert!(sharded.contains("SPUBLISH"));
            assert!(
                !sharded.replace("SPUBLISH", "").contains("PUBLISH'"),
                "a publish the sharded build misses"
            );
        }
    }
}
