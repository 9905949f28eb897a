//! Scenario 6, failover safety: does a failover grant a second holder while the first still
//! believes it holds the lock? Redis master+replica (without and with `WAIT`), and a 3-node
//! ZooKeeper ensemble whose leader is killed.

use std::time::{Duration, Instant};

use lock_core::{DistributedLock, DistributedLockExt};
use lock_testkit::servers::{RedisServer, ZkEnsemble};

use crate::BenchResult;
use crate::record::Record;
use crate::scenarios::{Ctx, fresh_name};

/// The scenario id.
pub const ID: &str = "failover";

/// How one set of trials went.
#[derive(Debug, Default)]
struct Tally {
    trials: u64,
    first_granted: u64,
    second_granted: u64,
    first_lost: u64,
    second_holders: u64,
    seconds: f64,
}

/// Runs K trials of each.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a part that fails is noted as skipped.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let trials = ctx.pick(1, 5);
    for wait in [false, true] {
        let setting = if wait {
            "WAIT 1 replica, 300 ms"
        } else {
            "no WAIT"
        };
        match redis_trials(trials, wait).await {
            Ok(tally) => ctx.push(record(
                "redis",
                setting,
                "master killed with the replication link cut, replica promoted",
                &tally,
            )),
            Err(error) => ctx.skip(format!("{ID}: redis {setting}: {error}")),
        }
    }
    match zk_trials(ctx.pick(1, 3)).await {
        Ok(tally) => ctx.push(record(
            "zookeeper",
            "3-node ensemble",
            "leader killed",
            &tally,
        )),
        Err(error) => ctx.skip(format!("{ID}: zookeeper ensemble: {error}")),
    }
    Ok(())
}

fn record(backend: &str, setting: &str, fault: &str, tally: &Tally) -> Record {
    let mut record = Record::new(
        ID,
        &format!("distlock {}", env!("CARGO_PKG_VERSION")),
        backend,
    );
    record.clients = 2;
    record.ops = tally.trials;
    record.seconds = tally.seconds;
    record
        .with("setting", setting)
        .with("fault", fault)
        .with("first_granted", tally.first_granted)
        .with("second_granted", tally.second_granted)
        .with("first_told_lost", tally.first_lost)
        .with("second_holders", tally.second_holders)
}

/// The deterministic loss: replica paused (link cut), grant on the master, master killed,
/// replica resumed and promoted, a second client asks the promoted replica.
async fn redis_trials(trials: u64, wait: bool) -> BenchResult<Tally> {
    let mut tally = Tally::default();
    let started = Instant::now();
    for _ in 0..trials {
        let mut master = RedisServer::start()?;
        let mut replica = RedisServer::start_replica_of(&master)?;
        let name = fresh_name(ID);
        // Cut the link: the replica is stopped and the master drops its connection, so nothing
        // written from now on reaches the replica (not even its kernel socket buffer).
        replica.process().pause()?;
        master.command("CLIENT KILL TYPE replica")?;
        let mut builder = lock_redis::RedisLock::builder(&master.url());
        if wait {
            builder = builder.wait_for_replicas(1, Duration::from_millis(300));
        }
        let first_client = builder.connect().await?;
        let first = first_client.try_acquire(&name).await.ok().flatten();
        master.process().kill();
        replica.process().resume()?;
        replica.command("REPLICAOF NO ONE")?;
        let second_client = distlock::connect(&replica.url()).await?;
        let second = second_client.try_acquire(&name).await?;
        tally.trials += 1;
        tally.first_granted += u64::from(first.is_some());
        tally.second_granted += u64::from(second.is_some());
        tally.first_lost += u64::from(first.as_ref().is_some_and(|guard| guard.is_lost()));
        let first_believes = first.as_ref().is_some_and(|guard| !guard.is_lost());
        tally.second_holders += u64::from(first_believes && second.is_some());
        drop((first, second));
    }
    tally.seconds = started.elapsed().as_secs_f64();
    Ok(tally)
}

/// Client A holds through the ensemble; the leader is killed; once a new leader serves, client B
/// tries for 2 s. A second holder is B granted while A has not been told it lost the lock.
async fn zk_trials(trials: u64) -> BenchResult<Tally> {
    let mut ensemble = ZkEnsemble::start(3)?;
    let url = ensemble.url();
    let mut tally = Tally::default();
    let started = Instant::now();
    for _ in 0..trials {
        let name = fresh_name(ID);
        let first_client: std::sync::Arc<dyn DistributedLock> = distlock::connect(&url).await?;
        let first = first_client
            .acquire_timeout(&name, Duration::from_secs(10))
            .await?;
        let leader = ensemble.leader().ok_or("the ensemble has no leader")?;
        ensemble.nodes()[leader].process().kill();
        let deadline = Instant::now() + Duration::from_secs(30);
        while ensemble.leader().is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let second_client = distlock::connect(&url).await?;
        let second = second_client
            .acquire_timeout(&name, Duration::from_secs(2))
            .await
            .ok();
        tally.trials += 1;
        tally.first_granted += 1;
        tally.second_granted += u64::from(second.is_some());
        tally.first_lost += u64::from(first.is_lost());
        tally.second_holders += u64::from(second.is_some() && !first.is_lost());
        drop((first, second));
        ensemble.nodes()[leader].restart()?;
    }
    tally.seconds = started.elapsed().as_secs_f64();
    Ok(tally)
}
