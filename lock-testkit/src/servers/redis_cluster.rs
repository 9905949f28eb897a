//! A Redis Cluster on loopback: N primaries with M replicas each, every node a [`RedisServer`].

use std::time::{Duration, Instant};

use super::cluster_health::{promoted, wait_settled};
use super::cluster_nodes::{NodeLine, parse};
use super::cluster_setup::form;
use super::ports::PortReservation;
use super::redis::RedisServer;
use super::resp::call;
use super::slot_migration::{Endpoint, migrate};
use crate::ServerError;

/// How long the cluster may take to form, fail over, or agree on a moved slot.
pub(crate) const SETTLE: Duration = Duration::from_secs(30);

/// How long a manual fail-over may stay unanswered before it is asked for again: a little over
/// Redis's own 5 s limit for one.
const RETRY: Duration = Duration::from_secs(6);

/// A Redis Cluster whose nodes run on reserved client and bus ports (`cluster-port`, not the
/// default port + 10000, which nothing reserves), with a 1 s node timeout. Every node is killed
/// on drop. Node indices are stable: a failed-over replica keeps its index.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    /// The ports of the primaries once the cluster formed: the URL's seed nodes.
    seeds: Vec<u16>,
    /// Each node's cluster bus port, reserved for as long as the cluster lives.
    _bus_ports: Vec<PortReservation>,
    /// Holds `create.log`, the output of `redis-cli --cluster create`.
    _dir: tempfile::TempDir,
}

impl RedisCluster {
    /// Starts `primaries * (1 + replicas_per_primary)` nodes, joins them with `redis-cli
    /// --cluster create`, and waits (30 s at most) until the cluster is settled: every node
    /// answers `cluster_state:ok` with all 16384 slots served, every replica's link to its
    /// primary is up, and every node reports the same slot owners and roles.
    ///
    /// # Errors
    ///
    /// [`ServerError::Missing`] when `redis-server` or `redis-cli` is not installed;
    /// [`ServerError::Failed`] when `primaries` is below 3 (Redis Cluster's minimum), a node
    /// does not start, `redis-cli` fails, or the cluster does not settle in time.
    pub fn start(primaries: usize, replicas_per_primary: usize) -> Result<Self, ServerError> {
        if primaries < 3 {
            return Err(failed(format!(
                "needs 3 primaries or more, not {primaries}"
            )));
        }
        let formed = form(primaries, replicas_per_primary)?;
        let mut cluster = Self {
            nodes: formed.nodes,
            seeds: Vec::new(),
            _bus_ports: formed.bus_ports,
            _dir: formed.dir,
        };
        wait_settled(&mut cluster.nodes, "forming", |_, _| Ok(()))?;
        let primaries = cluster.primaries();
        cluster.seeds = primaries.iter().map(|&i| cluster.nodes[i].port()).collect();
        Ok(cluster)
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,...`: the primaries the cluster formed with,
    /// as seed nodes (a fail-over does not change it).
    pub fn url(&self) -> String {
        let seeds: Vec<String> = self
            .seeds
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis+cluster://{}", seeds.join(","))
    }

    /// Every node, primaries and replicas.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// Every node, to kill, pause or restart one.
    pub fn nodes_mut(&mut self) -> &mut [RedisServer] {
        &mut self.nodes
    }

    /// The indices of the primaries serving at least one slot, as the first node that answers
    /// sees them; empty when none answers.
    pub fn primaries(&self) -> Vec<usize> {
        let view = self.view().unwrap_or_default();
        let serving = view
            .iter()
            .filter(|line| line.primary && !line.slots.is_empty());
        let mut indices: Vec<usize> = serving.filter_map(|line| self.index_of(line)).collect();
        indices.sort_unstable();
        indices
    }

    /// The index of the node serving `slot`, as the first node that answers sees it.
    pub fn primary_of_slot(&self, slot: u16) -> Option<usize> {
        let view = self.view()?;
        self.index_of(view.iter().find(|line| line.serves(slot))?)
    }

    /// The lowest index among the replicas of node `primary` not flagged as failing.
    pub fn replica_of(&self, primary: usize) -> Option<usize> {
        let port = self.nodes.get(primary)?.port();
        let view = self.view()?;
        let id = &view.iter().find(|line| line.port == port)?.id;
        view.iter()
            .filter(|line| line.primary_id.as_ref() == Some(id) && !line.failing)
            .filter_map(|line| self.index_of(line))
            .min()
    }

    /// Node `index`'s id (`CLUSTER MYID`), if it answers.
    pub fn node_id(&self, index: usize) -> Option<String> {
        call(self.nodes.get(index)?.port(), &["CLUSTER", "MYID"])
            .ok()?
            .text()
    }

    /// Makes node `replica` the primary of its shard with `CLUSTER FAILOVER`, or `CLUSTER
    /// FAILOVER FORCE` when its primary's process is dead, then waits until it says
    /// `role:master` and the cluster is settled again (as after [`start`](Self::start), among
    /// the nodes whose process runs; a paused node counts as running and so fails the wait).
    /// A node that already is a primary (say, promoted on its own after its primary was
    /// killed) is only waited for.
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when there is no such node, the command is refused, or the
    /// cluster does not settle within 30 s.
    pub fn fail_over(&mut self, replica: usize) -> Result<(), ServerError> {
        let node = self.nodes.get(replica).ok_or_else(|| no_node(replica))?;
        let view = parse(
            &node
                .command("CLUSTER NODES")
                .map_err(|e| failed(e.to_string()))?,
        );
        let me = view.iter().find(|line| line.myself);
        let Some(primary_id) = me.and_then(|me| me.primary_id.clone()) else {
            return wait_settled(&mut self.nodes, "a fail-over", |nodes, _| {
                promoted(nodes, replica)
            });
        };
        let primary = view.iter().find(|line| line.id == primary_id);
        let primary = primary.and_then(|line| self.index_of(line));
        let alive = primary.is_some_and(|index| self.nodes[index].process().is_running());
        let command = if alive {
            "CLUSTER FAILOVER"
        } else {
            "CLUSTER FAILOVER FORCE"
        };
        let reply = self.nodes[replica].command(command).unwrap_or_default();
        if !reply.starts_with("+OK") && promoted(&self.nodes, replica).is_err() {
            return Err(failed(format!("{command} refused: {}", reply.trim())));
        }
        // A manual fail-over the primary does not join within 5 s is dropped without a word:
        // ask again after that.
        let mut asked = Instant::now();
        wait_settled(&mut self.nodes, "a fail-over", |nodes, now| {
            let promoted = promoted(nodes, replica);
            if promoted.is_err() && now.duration_since(asked) > RETRY {
                asked = now;
                let _ = nodes[replica].command(command);
            }
            promoted
        })
    }

    /// Moves `slot` with its keys from primary `from` to primary `to` (the steps of `redis-cli
    /// --cluster reshard`), then waits until every node agrees on its new owner. Returns how
    /// many keys moved.
    ///
    /// # Errors
    ///
    /// [`ServerError::Failed`] when `from` does not serve `slot`, `to` is not another primary,
    /// a step is refused, or the cluster does not settle within 30 s.
    pub fn migrate_slot(
        &mut self,
        slot: u16,
        from: usize,
        to: usize,
    ) -> Result<usize, ServerError> {
        if self.primary_of_slot(slot) != Some(from) {
            return Err(failed(format!("node {from} does not serve slot {slot}")));
        }
        let view = self.view().unwrap_or_default();
        let live_primaries = view.iter().filter(|line| line.primary && !line.failing);
        let primaries: Vec<usize> = live_primaries.filter_map(|l| self.index_of(l)).collect();
        if to == from || !primaries.contains(&to) {
            return Err(failed(format!("node {to} is not another primary")));
        }
        let endpoint = |index: usize| -> Result<Endpoint, ServerError> {
            let id = self.node_id(index).ok_or_else(|| no_node(index))?;
            Ok(Endpoint {
                port: self.nodes[index].port(),
                id,
            })
        };
        let (source, target) = (endpoint(from)?, endpoint(to)?);
        let mut others = Vec::new();
        for index in primaries.into_iter().filter(|i| *i != from && *i != to) {
            if self.nodes[index].process().is_running() {
                others.push(self.nodes[index].port());
            }
        }
        let moved = migrate(slot, &source, &target, &others)
            .map_err(|reason| failed(format!("migrating slot {slot}: {reason}")))?;
        wait_settled(
            &mut self.nodes,
            &format!("migrating slot {slot}"),
            |_, _| Ok(()),
        )?;
        Ok(moved)
    }

    /// The index of the node a `CLUSTER NODES` line describes.
    fn index_of(&self, line: &NodeLine) -> Option<usize> {
        self.nodes.iter().position(|node| node.port() == line.port)
    }

    /// `CLUSTER NODES` as the first node that answers sees it.
    fn view(&self) -> Option<Vec<NodeLine>> {
        self.nodes.iter().find_map(|node| {
            let view = parse(&node.command("CLUSTER NODES").ok()?);
            (!view.is_empty()).then_some(view)
        })
    }
}

fn no_node(index: usize) -> ServerError {
    failed(format!("node {index} does not exist or does not answer"))
}

pub(crate) fn failed(reason: String) -> ServerError {
    ServerError::Failed {
        server: "redis-cluster",
        reason,
    }
}
