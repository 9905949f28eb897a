//! What follows a Redlock round a majority granted: fences in step, waiting counts dropped.

use std::time::Duration;

use futures_util::future::join_all;

use crate::keys::LockKeys;
use crate::node::Node;
use crate::redlock_held::bounded;

/// Settles a round that `granted` (each granting master with the fence it proposed) won:
/// stores the highest proposal in every granting master's counter (the scripts only proposed
/// it), so any later majority (which shares a master with this one) counts past it, and drops
/// the acquisition's waiting count (`poller`) on the masters that answered `held` (the
/// granting ones dropped it in the script). Returns the fence and how many granting masters
/// are in step with it. Masters that did not answer keep a count until it expires by itself.
pub(crate) async fn settle(
    granted: &[(&Node, u64)],
    held: &[&Node],
    keys: &LockKeys,
    poller: Option<&str>,
    limit: Duration,
) -> (u64, usize) {
    let fence = granted.iter().map(|(_, fence)| *fence).max().unwrap_or(0);
    let raises = join_all(
        granted
            .iter()
            .map(|(node, _)| bounded(limit, node.raise_fence(keys, fence))),
    );
    let uncounts = join_all(
        poller
            .into_iter()
            .flat_map(|poller| held.iter().map(move |node| (node, poller)))
            .map(|(node, poller)| bounded(limit, node.uncount(keys, poller))),
    );
    let (raised, uncounted) = futures_util::future::join(raises, uncounts).await;
    for error in uncounted.into_iter().filter_map(Result::err) {
        tracing::debug!(%error, "dropping a granted waiter's count failed; it expires by itself");
    }
    let kept = raised.iter().filter(|outcome| outcome.is_ok()).count();
    (fence, kept)
}
