//! Elections in memory: the leader is the one holder of the name's election entry, and the
//! entry's change signal (plus its leader's lease end) is the push observers follow.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::claims::{ClaimEntries, Key, Kind, lock};
use crate::{Leader, LeaderTicks, LockName};

/// The leader of `name` now, once leases that ended are dropped.
pub(super) fn leader(entries: &ClaimEntries, name: &LockName) -> Option<Leader> {
    let mut entries = lock(entries);
    let entry = entries.get_mut(&(Kind::Election, name.clone()))?;
    entry.expire(Instant::now());
    let holder = entry.holders.first()?;
    Some(Leader::new(&*holder.label, holder.fence).with_term(holder.term))
}

/// What a tick waits for: the entry's signal, the version last seen, and the leader's lease
/// end (a lease that ends unrenewed is a change nobody announces).
fn snapshot(entries: &ClaimEntries, key: &Key) -> (Arc<Notify>, u64, Option<Instant>) {
    let mut entries = lock(entries);
    let entry = entries.entry(key.clone()).or_default();
    let lease_end = entry.holders.iter().map(|holder| holder.lease_end).min();
    (Arc::clone(&entry.changed), entry.version, lease_end)
}

/// A tick on every change of `name`'s election entry after this call, and when its leader's
/// lease ends.
pub(super) fn ticks(entries: Arc<ClaimEntries>, name: &LockName) -> LeaderTicks {
    let key = (Kind::Election, name.clone());
    let (_, seen, _) = snapshot(&entries, &key);
    futures_util::stream::unfold((entries, key, seen), |(entries, key, seen)| async move {
        loop {
            let (changed, version, lease_end) = snapshot(&entries, &key);
            if version != seen {
                return Some(((), (entries, key, version)));
            }
            let notified = changed.notified();
            tokio::pin!(notified);
            // Registered before the re-check, so a change in between is not missed.
            notified.as_mut().enable();
            if snapshot(&entries, &key).1 != seen {
                continue;
            }
            match lease_end {
                Some(end) => tokio::select! {
                    () = notified => {}
                    () = tokio::time::sleep_until(end) => {
                        return Some(((), (entries, key, seen)));
                    }
                },
                None => notified.await,
            }
        }
    })
    .boxed()
}
