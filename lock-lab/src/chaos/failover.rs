//! The failover scenario's deployments. In each, replication from the master to its replicas
//! is cut before holder A asks, so A's grant (or the grant `WAIT` then refuses) lands on the
//! master alone; the master is then killed and a replica that lacks the grant is promoted, and
//! holder B asks the deployment again.

use std::time::Duration;

use super::Backend;
use super::failover_cluster::ClusterFailover;
use super::failover_sentinel::SentinelFailover;
use super::lab::{master_and_replica, with_wait};
use lock_testkit::servers::RedisServer;

/// How long a promotion may take to be seen by every node (cluster) or Sentinel.
pub(crate) const PROMOTION_LIMIT: Duration = Duration::from_secs(30);

/// How often a promotion in progress is looked at.
pub(crate) const POLL: Duration = Duration::from_millis(20);

/// One trial's deployment, started for that trial alone and dropped (every process killed)
/// with it.
#[derive(Debug)]
pub(crate) enum Failover {
    /// A master and a replica; the replica is promoted with `REPLICAOF NO ONE` and B asks it.
    Pair {
        master: Box<RedisServer>,
        replica: Box<RedisServer>,
    },
    /// Three shards of a master and a replica each; the shard of the lock's slot fails over.
    Cluster(ClusterFailover),
    /// A master and two replicas watched by three Sentinels.
    Sentinel(SentinelFailover),
}

/// The URLs holders A and B use.
#[derive(Debug)]
pub(crate) struct Urls {
    pub(crate) a: String,
    pub(crate) b: String,
}

impl Failover {
    /// Starts `backend`'s deployment for the lock `name` and cuts replication to the replicas
    /// that could be promoted. A's URL waits for a replica's acknowledgement on the `+wait`
    /// backends; B's never does, as the promoted replica has no replica of its own yet.
    pub(crate) async fn prepare(backend: Backend, name: &str) -> Result<(Self, Urls), String> {
        let (failover, url) = match backend {
            Backend::Redis | Backend::RedisWait => {
                let (master, mut replica) = master_and_replica()?;
                replica.process().pause().map_err(|e| e.to_string())?;
                let killed = master
                    .command("CLIENT KILL TYPE replica")
                    .map_err(|e| e.to_string())?;
                if !killed.starts_with(":1") {
                    return Err(format!("replica link not cut: {killed}"));
                }
                let urls = Urls {
                    a: master.url(),
                    b: replica.url(),
                };
                let (master, replica) = (Box::new(master), Box::new(replica));
                (Self::Pair { master, replica }, urls)
            }
            Backend::RedisCluster | Backend::RedisClusterWait => {
                let cluster = ClusterFailover::start(name).await?;
                let url = cluster.url();
                (
                    Self::Cluster(cluster),
                    Urls {
                        a: url.clone(),
                        b: url,
                    },
                )
            }
            Backend::RedisSentinel | Backend::RedisSentinelWait => {
                let set = SentinelFailover::start(name).await?;
                let url = set.url();
                (
                    Self::Sentinel(set),
                    Urls {
                        a: url.clone(),
                        b: url,
                    },
                )
            }
            other => return Err(format!("no failover deployment for {}", other.id())),
        };
        let a = match backend {
            Backend::RedisWait | Backend::RedisClusterWait | Backend::RedisSentinelWait => {
                with_wait(&url.a)
            }
            _ => url.a,
        };
        Ok((failover, Urls { a, b: url.b }))
    }

    /// Kills the master and promotes a replica that lacks A's grant; returns once B may ask.
    pub(crate) async fn promote(&mut self) -> Result<(), String> {
        match self {
            Self::Pair { master, replica } => {
                master.process().kill();
                replica.process().resume().map_err(|e| e.to_string())?;
                let promoted = replica
                    .command("REPLICAOF NO ONE")
                    .map_err(|e| e.to_string())?;
                if !promoted.starts_with("+OK") {
                    return Err(format!("REPLICAOF NO ONE: {promoted}"));
                }
                Ok(())
            }
            Self::Cluster(cluster) => cluster.promote().await,
            Self::Sentinel(set) => set.promote().await,
        }
    }
}

/// Cuts replication from `nodes[master]` to `nodes[replicas]`: each replica is paused
/// (SIGSTOP), then the master drops their links, so nothing it writes from now on reaches them
/// (a paused replica cannot reconnect, and it is resumed only once the master is dead).
pub(crate) fn cut_replication(
    nodes: &mut [RedisServer],
    master: usize,
    replicas: &[usize],
) -> Result<(), String> {
    for &replica in replicas {
        let node = nodes.get_mut(replica).ok_or("no such replica")?;
        node.process().pause().map_err(|e| e.to_string())?;
    }
    let master = nodes.get(master).ok_or("no such master")?;
    let killed = master
        .command("CLIENT KILL TYPE replica")
        .map_err(|e| e.to_string())?;
    if killed.trim() != format!(":{}", replicas.len()) {
        return Err(format!("replica links not cut: {}", killed.trim()));
    }
    Ok(())
}

/// The fencing counter key of the lock `name`, as `lock-holder` (lock-redis's default prefix,
/// `distlock`) names it: `{distlock:NAME}:fence`. Its hash tag places every key of the lock in
/// one cluster slot, and the counter outlives a release, so whether a server has it tells
/// whether A's acquisition (granted or refused by `WAIT`) reached that server. Chaos lock names
/// have no `{`, `}` or `%`, which lock-redis would escape.
pub(crate) fn fence_key(name: &str) -> String {
    format!("{{distlock:{name}}}:fence")
}

/// Checks that A's acquisition reached the master (`on_master`: `EXISTS` there of the fence
/// counter) and not the replica promoted in its place (`on_promoted`): that the fault is the
/// one this scenario claims to strike.
pub(crate) fn check_grant_placement(on_master: &str, on_promoted: &str) -> Result<(), String> {
    if on_master.trim() != ":1" {
        return Err(format!(
            "A's fence counter is not on the master: {}",
            on_master.trim()
        ));
    }
    if on_promoted.trim() != ":0" {
        return Err(format!(
            "the promoted replica has A's fence counter (replication was not cut): {}",
            on_promoted.trim()
        ));
    }
    Ok(())
}

/// Whether the server on `server` says `role:master`.
pub(crate) fn is_master(server: &RedisServer) -> bool {
    server
        .command("INFO replication")
        .is_ok_and(|info| info.contains("role:master"))
}
