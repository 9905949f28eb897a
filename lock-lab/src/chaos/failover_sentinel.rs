//! The failover scenario behind Sentinels: the master dies after replication to both its
//! replicas was cut, and the Sentinels are asked to fail over (`SENTINEL FAILOVER`), so they
//! promote a replica that lacks A's grant.

use lock_testkit::servers::RedisSentinel;

use super::failover::{
    POLL, PROMOTION_LIMIT, check_grant_placement, cut_replication, fence_key, is_master,
};

/// A master (server 0), two replicas and three Sentinels, started for one trial.
#[derive(Debug)]
pub(crate) struct SentinelFailover {
    set: RedisSentinel,
    fence_key: String,
}

/// The original master's index among the set's servers.
const MASTER: usize = 0;

impl SentinelFailover {
    /// Starts the set and cuts replication to both replicas.
    pub(crate) async fn start(name: &str) -> Result<Self, String> {
        // Starting waits (blocking) until every Sentinel knows the others and the replicas.
        let mut set = tokio::task::spawn_blocking(|| RedisSentinel::start(2, 3))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        if set.primary_index() != Some(MASTER) {
            return Err("the Sentinels do not name the original master".into());
        }
        let replicas: Vec<usize> = (MASTER + 1..set.servers().len()).collect();
        cut_replication(set.servers_mut(), MASTER, &replicas)?;
        Ok(Self {
            set,
            fence_key: fence_key(name),
        })
    }

    /// `redis+sentinel://SENTINELS/distlock`.
    pub(crate) fn url(&self) -> String {
        self.set.url()
    }

    /// Kills the master, resumes the replicas and asks the Sentinels to fail over; returns
    /// once every Sentinel names a replica that says it is the master.
    pub(crate) async fn promote(&mut self) -> Result<(), String> {
        let old = self.set.servers()[MASTER].port();
        let on_master = self.set.servers()[MASTER]
            .command(&format!("EXISTS {}", self.fence_key))
            .map_err(|e| e.to_string())?;
        let servers = self.set.servers_mut();
        servers[MASTER].process().kill();
        for replica in &mut servers[MASTER + 1..] {
            replica.process().resume().map_err(|e| e.to_string())?;
        }
        let deadline = tokio::time::Instant::now() + PROMOTION_LIMIT;
        let mut asked = false;
        let promoted = loop {
            if !asked {
                asked = self.ask_fail_over()?;
            }
            match self.promoted(old) {
                Ok(index) => break index,
                Err(why) if tokio::time::Instant::now() >= deadline => {
                    return Err(format!("no promotion in {PROMOTION_LIMIT:?}: {why}"));
                }
                Err(_) => tokio::time::sleep(POLL).await,
            }
        };
        let on_promoted = self.set.servers()[promoted]
            .command(&format!("EXISTS {}", self.fence_key))
            .map_err(|e| e.to_string())?;
        check_grant_placement(&on_master, &on_promoted)
    }

    /// Sends `SENTINEL FAILOVER distlock` to the first Sentinel that answers; `false` when it
    /// found no replica fit to promote yet (one it has not heard from since the pause), to be
    /// asked again.
    fn ask_fail_over(&self) -> Result<bool, String> {
        let line = format!("SENTINEL FAILOVER {}", self.set.master_name());
        for sentinel in self.set.sentinels() {
            let Ok(reply) = sentinel.command(&line) else {
                continue;
            };
            return match reply.trim() {
                "+OK" => Ok(true),
                busy if busy.starts_with("-INPROG") => Ok(true),
                unfit if unfit.starts_with("-NOGOODSLAVE") => Ok(false),
                other => Err(format!("{line}: {other}")),
            };
        }
        Err("no Sentinel answers".into())
    }

    /// The index of the promoted replica once every Sentinel reports it as the master with
    /// the flags `master` alone (the fail-over over, no down flag), and it says `role:master`;
    /// or why not yet. Clients that look the master up in `SENTINEL MASTERS` (as redis-rs
    /// does) find no master while a fail-over is in progress.
    fn promoted(&self, old: u16) -> Result<usize, String> {
        let line = format!("SENTINEL master {}", self.set.master_name());
        let mut reported: Vec<(String, String)> = Vec::new();
        for sentinel in self.set.sentinels() {
            let reply = sentinel.command(&line).map_err(|e| e.to_string())?;
            let fields = fields(&reply);
            let value = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
            let value = |name: &str| value(name).unwrap_or_default().to_owned();
            reported.push((value("port"), value("flags")));
        }
        let port = match reported.first() {
            Some((port, flags))
                if flags == "master" && reported.iter().all(|r| r == &reported[0]) =>
            {
                port
            }
            _ => return Err(format!("the Sentinels report {reported:?}")),
        };
        let servers = self.set.servers();
        let index = servers
            .iter()
            .position(|server| server.port().to_string() == *port && server.port() != old)
            .ok_or(format!("the Sentinels report port {port}"))?;
        if !is_master(&servers[index]) {
            return Err(format!("the server on {port} is not role:master yet"));
        }
        Ok(index)
    }
}

/// The name-value pairs of a flat RESP array of bulk strings, as a raw reply.
fn fields(reply: &str) -> Vec<(&str, &str)> {
    let values: Vec<&str> = reply
        .split("\r\n")
        .filter(|line| !line.is_empty() && !line.starts_with(['*', '$']))
        .collect();
    values
        .chunks(2)
        .filter_map(|pair| Some((*pair.first()?, *pair.get(1)?)))
        .collect()
}
