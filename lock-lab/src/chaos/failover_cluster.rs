//! The failover scenario on a Redis Cluster: the shard that owns the lock's slot loses its
//! master after replication to its replica was cut, and the replica takes over the slot with
//! `CLUSTER FAILOVER TAKEOVER` (no vote, no handshake with the dead master).

use lock_testkit::servers::RedisCluster;

use super::failover::{
    POLL, PROMOTION_LIMIT, check_grant_placement, cut_replication, fence_key, is_master,
};

/// A cluster of three primaries with a replica each, started for one trial.
#[derive(Debug)]
pub(crate) struct ClusterFailover {
    cluster: RedisCluster,
    /// The index of the primary that serves the lock's slot, and of its replica.
    master: usize,
    replica: usize,
    fence_key: String,
}

impl ClusterFailover {
    /// Starts the cluster and cuts replication in the shard that owns the slot of lock `name`.
    pub(crate) async fn start(name: &str) -> Result<Self, String> {
        // Forming and settling takes seconds of blocking polls.
        let cluster = tokio::task::spawn_blocking(|| RedisCluster::start(3, 1))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let fence_key = fence_key(name);
        let slot = key_slot(&cluster, &fence_key)?;
        let master = cluster
            .primary_of_slot(slot)
            .ok_or(format!("no primary serves slot {slot}"))?;
        let replica = cluster
            .replica_of(master)
            .ok_or(format!("primary {master} has no replica"))?;
        let mut failover = Self {
            cluster,
            master,
            replica,
            fence_key,
        };
        cut_replication(failover.cluster.nodes_mut(), master, &[replica])?;
        Ok(failover)
    }

    /// `redis+cluster://` with the primaries the cluster formed with as seeds.
    pub(crate) fn url(&self) -> String {
        self.cluster.url()
    }

    /// Kills the shard's master, resumes its replica and has it take the slot over; returns
    /// once every live node names the replica a primary.
    pub(crate) async fn promote(&mut self) -> Result<(), String> {
        let on_master = self.exists(self.master)?;
        let nodes = self.cluster.nodes_mut();
        nodes[self.master].process().kill();
        let replica = &mut nodes[self.replica];
        replica.process().resume().map_err(|e| e.to_string())?;
        let reply = replica
            .command("CLUSTER FAILOVER TAKEOVER")
            .map_err(|e| e.to_string())?;
        if !reply.starts_with("+OK") {
            return Err(format!("CLUSTER FAILOVER TAKEOVER: {}", reply.trim()));
        }
        let deadline = tokio::time::Instant::now() + PROMOTION_LIMIT;
        while let Err(why) = self.promoted() {
            if tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "replica not promoted in {PROMOTION_LIMIT:?}: {why}"
                ));
            }
            tokio::time::sleep(POLL).await;
        }
        check_grant_placement(&on_master, &self.exists(self.replica)?)
    }

    /// Whether the replica is a primary by its own account and in every other live node's
    /// `CLUSTER NODES`, or why not.
    fn promoted(&self) -> Result<(), String> {
        let nodes = self.cluster.nodes();
        if !is_master(&nodes[self.replica]) {
            return Err("the replica is not role:master yet".into());
        }
        let address = format!("127.0.0.1:{}@", nodes[self.replica].port());
        for (index, node) in nodes.iter().enumerate() {
            if index == self.master || index == self.replica {
                continue;
            }
            let view = node.command("CLUSTER NODES").map_err(|e| e.to_string())?;
            let flags = view
                .lines()
                .map(|line| line.split_whitespace().collect::<Vec<_>>())
                .find(|fields| fields.get(1).is_some_and(|a| a.starts_with(&address)))
                .and_then(|fields| fields.get(2).map(|flags| flags.to_string()));
            if !flags.is_some_and(|flags| flags.split(',').any(|flag| flag == "master")) {
                return Err(format!(
                    "node {index} does not name the replica a primary yet"
                ));
            }
        }
        Ok(())
    }

    /// `EXISTS` of the lock's fence counter on node `index` (the raw reply).
    fn exists(&self, index: usize) -> Result<String, String> {
        self.cluster.nodes()[index]
            .command(&format!("EXISTS {}", self.fence_key))
            .map_err(|e| e.to_string())
    }
}

/// `CLUSTER KEYSLOT key`, as the first node computes it.
fn key_slot(cluster: &RedisCluster, key: &str) -> Result<u16, String> {
    let node = cluster.nodes().first().ok_or("the cluster has no node")?;
    let reply = node
        .command(&format!("CLUSTER KEYSLOT {key}"))
        .map_err(|e| e.to_string())?;
    reply
        .trim()
        .trim_start_matches(':')
        .parse()
        .map_err(|_| format!("CLUSTER KEYSLOT {key}: {}", reply.trim()))
}
