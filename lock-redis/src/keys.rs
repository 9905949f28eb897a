//! Mapping lock names to Redis keys that share one hash tag.

use lock_core::{Error, LockName, Result};

/// The keys one lock name uses. All of them share the hash tag `{PREFIX:NAME}`, so the scripts
/// touch one Redis Cluster slot. Only the tag is kept: the other keys are the tag and a
/// suffix, written straight into the command that names them ([`Key`]), so an acquisition or
/// a release builds no key of its own.
///
/// - [`lock`](Self::lock), `{PREFIX:NAME}`: while the lock is held, `OWNER_TOKEN GRANTED_MS
///   LABEL`: the owner's fixed-length token, the grant time (server clock, ms since the
///   epoch), the owner label.
/// - [`fence`](Self::fence), `:fence`: the fencing counter, incremented on every grant, never
///   expires.
/// - [`channel`](Self::channel), `:released`: the prefix of the waiters' channels. A release
///   publishes on the first queued waiter's channel alone
///   ([`waiter_channel`](Self::waiter_channel)).
/// - [`queue`](Self::queue), `:queue`: waiters' tokens by arrival time (a sorted set).
/// - [`queue_expiry`](Self::queue_expiry), `:queue:expiry`: when each waiter is dropped unless
///   it refreshes (queued waiters, and Redlock's polling waiters, which are counted here but
///   never queued).
/// - [`queue_terms`](Self::queue_terms), `:queue:terms`: the lease and label of each queued
///   waiter a release may grant the lock to directly (a hash: token -> `LEASE_MS LABEL`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LockKeys {
    tag: String,
}

impl LockKeys {
    /// The keys for `name` under `prefix` (already checked by [`validate_prefix`]).
    pub(crate) fn new(prefix: &str, name: &LockName) -> Self {
        let name = name.as_str();
        let mut tag = String::with_capacity(prefix.len() + name.len() + 8);
        tag.push('{');
        tag.push_str(prefix);
        tag.push(':');
        escape_into(&mut tag, name);
        tag.push('}');
        Self { tag }
    }

    /// The keys of the lock whose key (its hash tag, `{PREFIX:NAME}`) is `tag`.
    pub(crate) fn of_lock(tag: String) -> Self {
        Self { tag }
    }

    /// The lock key, `{PREFIX:NAME}`.
    pub(crate) fn lock(&self) -> &str {
        &self.tag
    }

    /// The fencing counter.
    pub(crate) fn fence(&self) -> Key<'_> {
        self.key(":fence")
    }

    /// The prefix of the waiters' channels.
    pub(crate) fn channel(&self) -> Key<'_> {
        self.key(":released")
    }

    /// The waiter queue.
    pub(crate) fn queue(&self) -> Key<'_> {
        self.key(":queue")
    }

    /// The waiters' expiries.
    pub(crate) fn queue_expiry(&self) -> Key<'_> {
        self.key(":queue:expiry")
    }

    /// The queued waiters' grant terms.
    pub(crate) fn queue_terms(&self) -> Key<'_> {
        self.key(":queue:terms")
    }

    fn key(&self, suffix: &'static str) -> Key<'_> {
        Key {
            tag: &self.tag,
            suffix,
        }
    }

    /// `{PREFIX:NAME}:released:TOKEN`: the channel on which the waiting acquisition with owner
    /// `token` hears that it is first in line. Under the lock's hash tag, so a cluster routes
    /// it to the lock's shard.
    pub(crate) fn waiter_channel(&self, token: &str) -> String {
        format!("{}:{token}", self.channel())
    }
}

/// One key of a lock other than the lock key: its tag and a suffix, written into a command as
/// one argument without being built first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key<'a> {
    tag: &'a str,
    suffix: &'static str,
}

impl std::fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tag)?;
        f.write_str(self.suffix)
    }
}

impl redis::ToRedisArgs for Key<'_> {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
        use std::io::Write as _;
        let mut arg = out.writer_for_next_arg();
        // The writer appends to the command's buffer in memory, which cannot fail.
        let written = arg
            .write_all(self.tag.as_bytes())
            .and_then(|()| arg.write_all(self.suffix.as_bytes()));
        debug_assert!(written.is_ok(), "a key not written: {written:?}");
    }
}

/// The shared-hold objects a name has beside its mutex, each with keys of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClaimObject {
    /// A counting semaphore (`sem`).
    Semaphore,
    /// A read-write lock (`rw`).
    ReadWrite,
    /// An election (`elect`): one writer-like holder, the leader; its grants count terms and
    /// every change is announced to observers.
    Election,
}

impl ClaimObject {
    fn kind(self) -> &'static str {
        match self {
            Self::Semaphore => "sem",
            Self::ReadWrite => "rw",
            Self::Election => "elect",
        }
    }
}

/// The keys of a semaphore, read-write lock or election of one name: apart from the mutex's
/// keys and each other's, under the same hash tag (one Redis Cluster slot).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClaimKeys {
    /// Which object of the name these are.
    pub(crate) object: ClaimObject,
    /// `{PREFIX:NAME}:KIND:holders`: holders' tokens by lease end (server ms).
    pub(crate) holders: String,
    /// `{PREFIX:NAME}:KIND:info`: each holder's `CLAIM FENCE GRANTED_MS LABEL`.
    pub(crate) info: String,
    /// `{PREFIX:NAME}:KIND:fence`: the object's fencing counter, never expires.
    pub(crate) fence: String,
    /// `{PREFIX:NAME}:KIND:queue`: waiters' tokens by arrival (server us).
    pub(crate) queue: String,
    /// `{PREFIX:NAME}:KIND:queue:claim`: each waiter's claim (`p`, `r`, `w`).
    pub(crate) queue_claims: String,
    /// `{PREFIX:NAME}:KIND:queue:expiry`: when each waiter is dropped unless it refreshes.
    pub(crate) queue_expiry: String,
    /// `{PREFIX:NAME}:KIND:limit`: the semaphore limit its holders use.
    pub(crate) limit: String,
    /// `{PREFIX:NAME}:KIND:changed`: the channel releases (and an election's grants) publish
    /// on.
    pub(crate) channel: String,
    /// `{PREFIX:NAME}:KIND:term`: how many holds an election granted, never expires (unused
    /// by the other objects).
    pub(crate) term: String,
}

impl ClaimKeys {
    /// The keys of `name`'s `object` under `prefix`.
    pub(crate) fn new(prefix: &str, name: &LockName, object: ClaimObject) -> Self {
        let base = format!("{{{prefix}:{}}}:{}", escape(name.as_str()), object.kind());
        Self {
            object,
            holders: format!("{base}:holders"),
            info: format!("{base}:info"),
            fence: format!("{base}:fence"),
            queue: format!("{base}:queue"),
            queue_claims: format!("{base}:queue:claim"),
            queue_expiry: format!("{base}:queue:expiry"),
            limit: format!("{base}:limit"),
            channel: format!("{base}:changed"),
            term: format!("{base}:term"),
        }
    }
}

/// Escapes the characters that could end or open a hash tag early (`{`, `}`), and the escape
/// character itself, so the mapping stays one-to-one: two names never share a key.
pub(crate) fn escape(name: &str) -> String {
    let mut escaped = String::with_capacity(name.len());
    escape_into(&mut escaped, name);
    escaped
}

/// [`escape`], appending to `out`.
fn escape_into(out: &mut String, name: &str) {
    for c in name.chars() {
        match c {
            '%' => out.push_str("%25"),
            '{' => out.push_str("%7B"),
            '}' => out.push_str("%7D"),
            c => out.push(c),
        }
    }
}

/// Undoes [`escape`]; `None` for text `escape` cannot have made (a key that is not ours).
pub(crate) fn unescape(escaped: &str) -> Option<String> {
    let mut name = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(at) = rest.find('%') {
        name.push_str(&rest[..at]);
        let (code, tail) = (rest.get(at + 1..at + 3)?, &rest[at + 3..]);
        name.push(match code {
            "25" => '%',
            "7B" => '{',
            "7D" => '}',
            _ => return None,
        });
        rest = tail;
    }
    if rest.contains(['{', '}']) {
        return None;
    }
    name.push_str(rest);
    Some(name)
}

/// Checks a key prefix: non-empty, printable, and free of the braces that delimit the hash tag.
pub(crate) fn validate_prefix(prefix: &str) -> Result<()> {
    if prefix.is_empty() || prefix.len() > 64 {
        return Err(Error::invalid_input(format!(
            "key prefix {prefix:?} must be 1 to 64 bytes long"
        )));
    }
    if prefix
        .chars()
        .any(|c| c.is_control() || c == '{' || c == '}')
    {
        return Err(Error::invalid_input(format!(
            "key prefix {prefix:?} must not contain braces or control characters: \
             it becomes part of the keys' hash tag"
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn keys(name: &str) -> LockKeys {
        LockKeys::new("distlock", &LockName::new(name).expect("valid name"))
    }

    /// Every key of a lock, the lock key first.
    pub(crate) fn all_of(keys: &LockKeys) -> [String; 6] {
        [
            keys.lock().to_owned(),
            keys.fence().to_string(),
            keys.channel().to_string(),
            keys.queue().to_string(),
            keys.queue_expiry().to_string(),
            keys.queue_terms().to_string(),
        ]
    }

    #[test]
    fn keys_share_one_hash_tag() {
        let keys = keys("jobs/nightly");
        assert_eq!(keys.lock(), "{distlock:jobs/nightly}");
        assert_eq!(keys.fence().to_string(), "{distlock:jobs/nightly}:fence");
        assert_eq!(
            keys.channel().to_string(),
            "{distlock:jobs/nightly}:released"
        );
        assert_eq!(
            keys.waiter_channel("t"),
            "{distlock:jobs/nightly}:released:t"
        );
    }

    #[test]
    fn claim_keys_share_the_mutex_tag_but_no_key() {
        let name = LockName::new("jobs/nightly").expect("valid name");
        let (sem, rw, elect) = (
            ClaimKeys::new("distlock", &name, ClaimObject::Semaphore),
            ClaimKeys::new("distlock", &name, ClaimObject::ReadWrite),
            ClaimKeys::new("distlock", &name, ClaimObject::Election),
        );
        let mutex = keys("jobs/nightly");
        for key in [
            &sem.holders,
            &sem.channel,
            &rw.holders,
            &rw.queue_claims,
            &elect.term,
        ] {
            assert!(key.starts_with("{distlock:jobs/nightly}:"), "{key}");
        }
        let mutex_keys = all_of(&mutex);
        for key in [
            &sem.holders,
            &sem.fence,
            &sem.queue,
            &rw.fence,
            &rw.channel,
            &elect.fence,
        ] {
            assert!(!mutex_keys.contains(key), "{key}");
        }
        assert_ne!(sem.fence, rw.fence);
        assert_ne!(rw.fence, elect.fence);
        assert_ne!(rw.holders, elect.holders);
    }

    /// A cluster runs a script only when all its keys share one slot, so every key of a name
    /// (mutex, semaphore, read-write lock, election, channels included) must hash alike,
    /// whatever the name.
    #[test]
    fn every_key_of_a_name_is_in_one_cluster_slot() {
        use redis::cluster_routing::Slot;
        for name in ["jobs/nightly", "a}b", "{x}", "a{b}c", "ünï/cödé", "x:y:z"] {
            let name = LockName::new(name).expect("valid name");
            let mutex = LockKeys::new("distlock", &name);
            let mut all = all_of(&mutex).to_vec();
            for object in [
                ClaimObject::Semaphore,
                ClaimObject::ReadWrite,
                ClaimObject::Election,
            ] {
                let claim = ClaimKeys::new("distlock", &name, object);
                all.extend([
                    claim.holders,
                    claim.info,
                    claim.fence,
                    claim.queue,
                    claim.queue_claims,
                    claim.queue_expiry,
                    claim.limit,
                    claim.term,
                    claim.channel,
                ]);
            }
            let slot = Slot::for_key(mutex.lock());
            for key in &all {
                assert_eq!(Slot::for_key(key), slot, "{key} is in another slot");
            }
        }
    }

    #[test]
    fn braces_cannot_break_the_tag_and_names_stay_distinct() {
        let names = ["a}b", "a%7Db", "a{b", "a%b", "a%25b", "{x}"];
        let mapped: Vec<String> = names.iter().map(|n| keys(n).lock().to_owned()).collect();
        for (name, key) in names.iter().zip(&mapped) {
            let inner = &key[1..key.len() - 1];
            assert!(!inner.contains(['{', '}']), "{name:?} -> {key:?}");
        }
        let mut unique = mapped.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{mapped:?}");
        for name in names {
            assert_eq!(unescape(&escape(name)).as_deref(), Some(name));
        }
        for foreign in ["a%", "a%7", "a%41", "a{b", "a}b"] {
            assert_eq!(unescape(foreign), None, "{foreign:?}");
        }
    }

    #[test]
    fn prefixes_with_braces_or_nothing_are_rejected() {
        assert!(validate_prefix("distlock").is_ok());
        for bad in ["", "a{b", "a}", "x\ny"] {
            assert!(validate_prefix(bad).is_err(), "{bad:?} accepted");
        }
    }
}
