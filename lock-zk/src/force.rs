//! `force_release`: an operator deletes a stuck holder's node, named by its fencing token.

use lock_core::backend::Deadline;
use lock_core::{LockName, Result};
use zookeeper_client as zk;

use crate::errors::{convert, is_connection_loss, within};
use crate::nodes::fencing_token;
use crate::queue;
use crate::steps::ZkSteps;

impl ZkSteps {
    /// Deletes `name`'s holder node if its fencing token is `token`: `Ok(true)` once deleted,
    /// `Ok(false)` when the holder has another token, or there is none. The delete names the
    /// node's path, unique to one acquisition (the `_c_<uuid>-` prefix ours and Curator's carry),
    /// and the data version read with its token: it removes that very node or nothing, never a
    /// newer holder's. The holder's next confirmation then finds the node gone and fires its
    /// lost signal, and the next waiter's watch wakes it.
    pub(crate) async fn force_release(&self, name: &LockName, token: u64) -> Result<bool> {
        let session = self.sessions.session(Deadline::NEVER).await?;
        let queue = queue::read(&session, &self.parent(name), "force_release").await?;
        let Some(holder) = queue.holder else {
            return Ok(false);
        };
        if fencing_token(holder.stat.czxid) != token {
            return Ok(false);
        }
        let (client, limit) = (session.client(), session.operation_timeout());
        let version = Some(holder.stat.version);
        let mut retried = false;
        loop {
            let deleted = client.delete(&holder.path, version);
            match within(limit, "force_release", deleted).await? {
                Ok(()) => return Ok(true),
                // After an ambiguous first attempt, a missing node means that attempt deleted it.
                Err(zk::Error::NoNode) => return Ok(retried),
                // Its data changed since the read: not the hold that was inspected.
                Err(zk::Error::BadVersion) => return Ok(false),
                Err(error) if is_connection_loss(&error) && !retried => retried = true,
                Err(error) => return Err(convert(error, "force_release")),
            }
        }
    }
}
