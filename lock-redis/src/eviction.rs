//! The check at connect that the server never evicts lock keys.

use lock_core::{Error, ErrorKind, Result};

use crate::link::Link;

/// The policy that never evicts keys.
const SAFE: &str = "noeviction";

/// Refuses a server whose `maxmemory-policy` may evict keys under memory pressure (a held lock
/// could vanish and be granted again), unless `allow` says the risk is accepted; then it
/// warns. A server that does not let this user read `INFO memory` is not checked (warned).
/// In a cluster, every master is checked.
pub(crate) async fn check(link: &Link, allow: bool) -> Result<()> {
    let info = link
        .run(|mut connection| async move {
            let mut info = redis::cmd("INFO");
            info.arg("memory");
            connection.on_every_master(info).await
        })
        .await;
    let info = match info {
        Ok(info) => info,
        Err(error) if error.kind() == ErrorKind::Backend => {
            tracing::warn!(%error, server = link.name(), "cannot read INFO memory to check maxmemory-policy; make sure it is noeviction");
            return Ok(());
        }
        Err(error) => return Err(error),
    };
    let policy = info
        .iter()
        .flat_map(|node| node.lines())
        .filter_map(|line| line.trim().strip_prefix("maxmemory_policy:"))
        .find(|policy| *policy != SAFE)
        .unwrap_or(SAFE);
    if policy == SAFE {
        return Ok(());
    }
    if allow {
        tracing::warn!(
            server = link.name(),
            policy,
            "Redis may evict lock keys under memory pressure (allow_eviction is set): a held lock can vanish and be granted twice"
        );
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Unsupported,
        format!(
            "Redis at {} may evict keys under memory pressure (maxmemory-policy {policy}), so a \
             held lock could vanish and be granted to a second holder: set maxmemory-policy \
             noeviction, or accept the risk with allow_eviction=true in the URL",
            link.name()
        ),
    )
    .with_server(link.name()))
}
