//! Cleanup armed before an acquire script is sent, so a dropped acquire leaves no lock behind.

use crate::keys::LockKeys;
use crate::node::Node;

/// Deletes `token`'s lock on every node in the background when dropped while armed.
///
/// An acquire arms it before awaiting its script: if the future is dropped after the script was
/// sent, the script may still set the key on the server. The compare-and-delete then runs on the
/// same connection, so Redis executes it after the acquire script, and deletes the key only if
/// that script granted it to `token`. A normal return disarms it.
#[derive(Debug)]
pub(crate) struct ArmedCleanup {
    armed: Option<(Vec<Node>, LockKeys, String)>,
}

impl ArmedCleanup {
    /// Arms a cleanup of `token`'s hold of `keys` on `nodes`.
    pub(crate) fn arm(nodes: &[Node], keys: &LockKeys, token: &str) -> Self {
        Self {
            armed: Some((nodes.to_vec(), keys.clone(), token.to_owned())),
        }
    }

    /// The outcome is in hand: nothing to clean up.
    pub(crate) fn disarm(mut self) {
        self.armed = None;
    }
}

impl Drop for ArmedCleanup {
    fn drop(&mut self) {
        let Some((nodes, keys, token)) = self.armed.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for node in nodes {
            let (keys, token) = (keys.clone(), token.clone());
            runtime.spawn(async move {
                if let Err(error) = node.release(&keys, &token).await {
                    tracing::warn!(%error, lock = %keys.lock, "cleanup after an interrupted acquire failed; the lease will end it");
                }
            });
        }
    }
}
