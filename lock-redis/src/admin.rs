//! What an operator sees and does on one master: inspect a lock, list held names,
//! force-release a hold by its fencing token.

use std::time::{Duration, SystemTime};

use lock_core::{HolderInfo, LockName, MAX_OWNER_LABEL, Result};

use crate::invocation;
use crate::keys::LockKeys;
use crate::listing::{lock_key_pattern, lock_name_of};
use crate::node::Node;

/// How many keys one `SCAN` call looks at.
const SCAN_BATCH: usize = 1000;

/// One lock as one master shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeStatus {
    pub(crate) holder: Option<NodeHolder>,
    /// Waiters whose entries are live: queued ones and polling (Redlock) ones.
    pub(crate) waiters: u64,
}

/// The holder one master shows: who owns the key (the owner token, or a foreign key's whole
/// value), and what an operator sees of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeHolder {
    pub(crate) owner: String,
    pub(crate) info: HolderInfo,
}

impl NodeHolder {
    /// Reads a lock key's value (`OWNER_TOKEN GRANTED_MS LABEL`), its PTTL and the fence
    /// counter (0 when there is none: a Redlock master whose grant came too late to count
    /// keeps the counter it had). A value in another format belongs to a plain `SET NX`
    /// client: it shows as its own label (cut to the longest label), with fencing token 0 and
    /// no grant time.
    fn read(value: &[u8], pttl: i64, fence: Option<&str>) -> Self {
        let text = String::from_utf8_lossy(value);
        let mut parts = text.splitn(3, ' ');
        let (owner, granted, label) = (parts.next(), parts.next(), parts.next());
        let ours = owner.filter(|owner| owner.len() == 32 && is_hex(owner));
        let granted = granted.and_then(|granted| granted.parse::<u64>().ok());
        let fence = fence
            .and_then(|fence| fence.parse::<u64>().ok())
            .unwrap_or(0);
        let (owner, mut info) = match (ours, granted, label) {
            (Some(owner), Some(granted), Some(label)) => {
                let at = SystemTime::UNIX_EPOCH + Duration::from_millis(granted);
                (
                    owner.to_owned(),
                    HolderInfo::new(label, fence).granted_at(at),
                )
            }
            _ => (text.to_string(), HolderInfo::new(cut(&text), 0)),
        };
        if let Ok(left) = u64::try_from(pttl) {
            info = info.lease_left(Duration::from_millis(left));
        }
        Self { owner, info }
    }
}

fn is_hex(text: &str) -> bool {
    text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// `text` cut to at most [`MAX_OWNER_LABEL`] bytes, on a character boundary.
fn cut(text: &str) -> &str {
    let mut end = text.len().min(MAX_OWNER_LABEL);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl Node {
    /// Reads `keys`' lock on this master in one script: holder, lease left, live waiters.
    pub(crate) async fn inspect(&self, keys: &LockKeys) -> Result<NodeStatus> {
        let invocation = invocation::inspect(keys);
        let (value, pttl, fence, waiters): (Option<Vec<u8>>, i64, Option<String>, u64) = self
            .link()
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        let holder = value.map(|value| NodeHolder::read(&value, pttl, fence.as_deref()));
        Ok(NodeStatus { holder, waiters })
    }

    /// Deletes `keys`' lock if it is held and its fence counter is `fence`, waking the first
    /// queued waiter: `true` when it did.
    pub(crate) async fn force_release(&self, keys: &LockKeys, fence: u64) -> Result<bool> {
        let invocation = invocation::force_release(keys, fence, self.wake());
        let released: i64 = self
            .link()
            .run(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await?;
        Ok(released == 1)
    }

    /// The names under key prefix `prefix` whose lock key exists, starting with
    /// `name_prefix`, sorted: `SCAN` through the keyspace (of every master, in a cluster), matching lock keys only.
    pub(crate) async fn held_names(
        &self,
        prefix: &str,
        name_prefix: &str,
    ) -> Result<Vec<LockName>> {
        let pattern = lock_key_pattern(prefix, name_prefix);
        let mut names = Vec::new();
        let shards = self
            .link()
            .run(|mut connection| async move { connection.shards().await })
            .await?;
        for shard in &shards {
            let mut cursor = 0_u64;
            loop {
                let mut scan = redis::cmd("SCAN");
                scan.arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(SCAN_BATCH);
                let (next, keys): (u64, Vec<Vec<u8>>) = self
                    .link()
                    .run(|mut connection| async move { connection.query_on(scan, shard).await })
                    .await?;
                let found = keys.iter().filter_map(|key| lock_name_of(prefix, key));
                names.extend(found.filter(|name| name.as_str().starts_with(name_prefix)));
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        // SCAN may return a key more than once.
        names.sort();
        names.dedup();
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn our_values_show_token_label_and_grant_time() {
        let value = format!("{TOKEN} 1700000000123 host-1:42 with spaces");
        let holder = NodeHolder::read(value.as_bytes(), 900, Some("17"));
        assert_eq!(holder.owner, TOKEN);
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let expected = HolderInfo::new("host-1:42 with spaces", 17)
            .granted_at(at)
            .lease_left(Duration::from_millis(900));
        assert_eq!(holder.info, expected);
        let uncounted = NodeHolder::read(value.as_bytes(), 900, None);
        assert_eq!(uncounted.owner, TOKEN);
        assert_eq!(uncounted.info.fencing_token, 0);
    }

    #[test]
    fn foreign_values_show_as_their_label_with_no_token() {
        let long = "x".repeat(300);
        for value in ["plain-client", TOKEN, &format!("{TOKEN} soon label"), &long] {
            let holder = NodeHolder::read(value.as_bytes(), -1, Some("17"));
            assert_eq!(holder.owner, value);
            assert_eq!(holder.info.fencing_token, 0, "{value}");
            assert_eq!(holder.info.owner_label, cut(value), "{value}");
            assert_eq!(holder.info.lease_left, None);
            assert!(holder.info.owner_label.len() <= MAX_OWNER_LABEL);
        }
    }
}
