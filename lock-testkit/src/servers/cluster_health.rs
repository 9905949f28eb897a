//! When a Redis Cluster has settled (every running node healthy and of one mind), and waiting
//! until it has.

use std::time::Instant;

use super::cluster_nodes::{Layout, layout, parse};
use super::poll::poll_until;
use super::redis::RedisServer;
use super::redis_cluster::{SETTLE, failed};
use crate::ServerError;

/// Waits (30 s at most) until `also` (given the nodes and the time of the check) holds and the
/// cluster is [settled](unsettled), failing with the reason a node last gave and that node's
/// log.
pub(crate) fn wait_settled(
    nodes: &mut [RedisServer],
    after: &str,
    mut also: impl FnMut(&[RedisServer], Instant) -> Result<(), (usize, String)>,
) -> Result<(), ServerError> {
    let settled = poll_until(SETTLE, || {
        also(nodes, Instant::now()).and_then(|()| unsettled(nodes))
    });
    settled.map_err(|(index, reason)| {
        failed(format!(
            "not settled after {after} within {SETTLE:?}: node {index} (port {}): {reason}; \
             its log:\n{}",
            nodes[index].port(),
            nodes[index].log_tail()
        ))
    })
}

/// Whether node `index` says `role:master`, or why not.
pub(crate) fn promoted(nodes: &[RedisServer], index: usize) -> Result<(), (usize, String)> {
    let info = nodes
        .get(index)
        .map(|node| node.command("INFO replication"));
    if info.is_some_and(|info| info.is_ok_and(|info| info.contains("role:master"))) {
        Ok(())
    } else {
        Err((index, "not role:master yet".to_owned()))
    }
}

/// Why a cluster is not settled, as the index of a node and what it said, looking at the nodes
/// whose process runs only. Settled means that every such node answers `cluster_state:ok` with
/// all 16384 slots served, flags no running node as failing, has its link to its primary up
/// when it is a replica, and reports the same slot owners and roles as every other.
fn unsettled(nodes: &mut [RedisServer]) -> Result<(), (usize, String)> {
    let alive: Vec<u16> = nodes
        .iter_mut()
        .filter_map(|node| node.process().is_running().then_some(node.port()))
        .collect();
    let mut agreed: Option<(usize, Layout)> = None;
    for (index, node) in nodes.iter().enumerate() {
        if !alive.contains(&node.port()) {
            continue;
        }
        let fail = |reason: String| (index, reason);
        let info = node
            .command("CLUSTER INFO")
            .map_err(|e| fail(e.to_string()))?;
        if !info.contains("cluster_state:ok") || !info.contains("cluster_slots_ok:16384") {
            let state = info.lines().filter(|line| line.starts_with("cluster_s"));
            return Err(fail(state.collect::<Vec<_>>().join(", ")));
        }
        let view = parse(
            &node
                .command("CLUSTER NODES")
                .map_err(|e| fail(e.to_string()))?,
        );
        if let Some(line) = view.iter().find(|l| l.failing && alive.contains(&l.port)) {
            return Err(fail(format!("flags live node {} as failing", line.port)));
        }
        let replica = view.iter().any(|line| line.myself && !line.primary);
        let info = node.command("INFO replication").unwrap_or_default();
        if replica && !info.contains("master_link_status:up") {
            return Err(fail("a replica whose link is not up".to_owned()));
        }
        let map = layout(&view, &alive);
        match &agreed {
            Some((first, first_map)) if *first_map != map => {
                return Err(fail(format!(
                    "its slot map or roles differ from node {first}'s"
                )));
            }
            Some(_) => {}
            None => agreed = Some((index, map)),
        }
    }
    Ok(())
}
