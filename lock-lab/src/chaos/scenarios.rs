//! What each scenario does: how holders reach the servers, the fault, and the healing.

use std::time::Duration;

use super::failover::Failover;
use super::lab::{LEASE, Lab, failover_only, via_port, zk_url};
use super::trial::{B_WAIT, Timing};
use super::worker::Worker;
use super::{Backend, Scenario};
use crate::fence::monotonic_ns;
use lock_testkit::faults::{Fault, FaultProxy};
use lock_testkit::servers::{RedisServer, ServerProcess};

/// ZooKeeper sessions in the ensemble (its 500 ms tick allows 1 s to 10 s).
const ENSEMBLE_SESSION: Duration = Duration::from_secs(3);

/// How the two holders reach the lock service in one trial, and what a fault needs.
#[derive(Debug, Default)]
pub(crate) struct Setup {
    pub(crate) url_a: String,
    pub(crate) url_b: String,
    proxies: Vec<FaultProxy>,
    /// Failover: the deployment whose master A uses and whose promoted replica B asks.
    failover: Option<Failover>,
    /// Leader kill: which ensemble node was killed.
    killed_node: Option<usize>,
}

impl Setup {
    /// How holders reach `backend` in `scenario` for the lock `name`, with the servers the
    /// fault needs started.
    pub(crate) async fn prepare(
        lab: &mut Lab,
        scenario: Scenario,
        backend: Backend,
        name: &str,
    ) -> Result<Self, String> {
        let mut setup = Self::default();
        match scenario {
            Scenario::RedisFailover => {
                let (failover, urls) = Failover::prepare(backend, name).await?;
                (setup.url_a, setup.url_b) = (urls.a, urls.b);
                setup.failover = Some(failover);
            }
            Scenario::LeaderKilled => {
                let url = zk_url(&lab.ensemble()?.connect_string(), ENSEMBLE_SESSION);
                (setup.url_a, setup.url_b) = (url.clone(), url);
            }
            Scenario::ServerClockStep => {
                let (url, _) = lab.faked(backend)?;
                (setup.url_a, setup.url_b) = (url.clone(), url);
            }
            Scenario::LinkBlackholed | Scenario::OneWayPartition | Scenario::LinkStalled => {
                let direct = lab.url(backend)?;
                let mut via = direct.clone();
                for port in server_ports(lab, backend)? {
                    let proxy = FaultProxy::start(([127, 0, 0, 1], port).into()).await;
                    via = via_port(&via, port, proxy.addr().port());
                    setup.proxies.push(proxy);
                }
                (setup.url_a, setup.url_b) = (via, direct);
            }
            _ => {
                let url = lab.url(backend)?;
                (setup.url_a, setup.url_b) = (url.clone(), url);
            }
        }
        Ok(setup)
    }
}

/// The fault, as it happened.
#[derive(Debug)]
pub(crate) struct Strike {
    pub(crate) b: Option<Worker>,
    pub(crate) timing: Timing,
}

/// Injects the scenario's fault with A holding (or refused), starts B and waits until B's hold
/// is over (or B gave up); heals whatever the scenario heals before B.
///
/// After a server pause or restart A keeps writing for up to two leases unless its lost signal
/// fires, then releases; so for backends that keep the lock through the fault, recovery (B's
/// grant) includes those two leases.
pub(crate) async fn strike(
    lab: &mut Lab,
    scenario: Scenario,
    backend: Backend,
    setup: &mut Setup,
    a: &mut Worker,
    spawn_b: impl Fn(&str) -> Result<Worker, String>,
) -> Result<Strike, String> {
    let two_leases = LEASE * 2;
    let mut timing = Timing {
        fault_ns: monotonic_ns(),
        resumed_ns: None,
        faults: 1,
    };
    let b = match scenario.fault() {
        Scenario::PausedHolder => {
            a.pause()?;
            let b = spawn_b(&setup.url_b)?;
            b.wait_ended(B_WAIT + LEASE).await;
            timing.resumed_ns = Some(monotonic_ns());
            a.resume()?;
            // A exits by itself once it has seen its lost signal (after one more write).
            a.wait_exit(Duration::from_secs(10)).await;
            b
        }
        Scenario::KilledHolder => {
            a.kill();
            spawn_b(&setup.url_b)?
        }
        Scenario::LinkBlackholed | Scenario::OneWayPartition => {
            let fault = if scenario == Scenario::LinkBlackholed {
                Fault::Blackhole
            } else {
                Fault::DropRequests
            };
            setup.proxies.iter().for_each(|p| p.set(fault));
            let b = spawn_b(&setup.url_b)?;
            b.wait_ended(B_WAIT + LEASE).await;
            setup.proxies.iter().for_each(|p| p.set(Fault::Pass));
            b
        }
        Scenario::LinkStalled => {
            setup
                .proxies
                .iter()
                .for_each(FaultProxy::stall_open_connections);
            // A may reconnect and keep its hold; if it still holds after two leases it
            // releases, so B's wait ends either way.
            after_server_fault(a, spawn_b(&setup.url_b)?).await
        }
        Scenario::ServerClockStep => {
            let (_, clock) = lab.faked(backend)?;
            clock.step(Duration::from_secs(4))?;
            after_server_fault(a, spawn_b(&setup.url_b)?).await
        }
        Scenario::ReplicaLagging => {
            lab.redis_pair()?
                .1
                .process()
                .pause()
                .map_err(|e| e.to_string())?;
            let b = spawn_b(&setup.url_b)?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            a.release();
            b
        }
        Scenario::LockrunKilled | Scenario::LockrunFrozen => {
            return Err("lockrun scenarios run through chaos::lockrun".into());
        }
        // `fault()` maps these onto the holder scenarios above.
        Scenario::PausedPermitHolder
        | Scenario::KilledPermitHolder
        | Scenario::PausedReader
        | Scenario::KilledReader
        | Scenario::PausedLeader
        | Scenario::KilledLeader => return Err("no fault of its own".into()),
        Scenario::ServerPaused => {
            servers(lab, backend)?
                .iter()
                .try_for_each(|s| s.pause())
                .map_err(|e| e.to_string())?;
            tokio::time::sleep(two_leases).await;
            servers(lab, backend)?
                .iter()
                .try_for_each(|s| s.resume())
                .map_err(|e| e.to_string())?;
            after_server_fault(a, spawn_b(&setup.url_b)?).await
        }
        Scenario::ServerRestarted => {
            restart(lab, backend)?;
            after_server_fault(a, spawn_b(&setup.url_b)?).await
        }
        Scenario::RedisFailover => {
            let failover = setup.failover.as_mut().ok_or("no failover deployment")?;
            failover.promote().await?;
            spawn_b(&setup.url_b)?
        }
        Scenario::LeaderKilled => {
            let ensemble = lab.ensemble()?;
            let leader = ensemble.leader().ok_or("the ensemble has no leader")?;
            ensemble.nodes()[leader].process().kill();
            setup.killed_node = Some(leader);
            let b = spawn_b(&setup.url_b)?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            a.release();
            b
        }
        Scenario::RedlockMinorityPaused => {
            lab.redlock()?[0]
                .process()
                .pause()
                .map_err(|e| e.to_string())?;
            let b = spawn_b(&setup.url_b)?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            a.release();
            b
        }
    };
    b.wait_ended(B_WAIT + LEASE).await;
    Ok(Strike { b: Some(b), timing })
}

/// After a server fault: B asks at once; A, still writing, has two leases to learn whether it
/// lost the lock (if it kept it, it then releases, and B's grant follows).
async fn after_server_fault(a: &mut Worker, b: Worker) -> Worker {
    a.wait_ended(LEASE * 2).await;
    a.release();
    b
}

/// Undoes what a fault left behind for the next trial (a paused master, a killed node).
pub(crate) fn heal(
    lab: &mut Lab,
    scenario: Scenario,
    _backend: Backend,
    setup: &mut Setup,
) -> Result<(), String> {
    match scenario {
        Scenario::RedlockMinorityPaused => lab.redlock()?[0]
            .process()
            .resume()
            .map_err(|e| e.to_string()),
        Scenario::ReplicaLagging => lab
            .redis_pair()?
            .1
            .process()
            .resume()
            .map_err(|e| e.to_string()),
        Scenario::LeaderKilled => match setup.killed_node.take() {
            Some(node) => lab.ensemble()?.nodes()[node]
                .restart()
                .map_err(|e| e.to_string()),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// The server processes behind a backend.
fn servers(lab: &mut Lab, backend: Backend) -> Result<Vec<&mut ServerProcess>, String> {
    Ok(match backend {
        Backend::Postgres => vec![lab.postgres()?.process()],
        Backend::Mysql => vec![lab.mysql()?.process()],
        Backend::Redis => vec![lab.redis()?.process()],
        Backend::RedisWait => vec![lab.redis_pair()?.0.process()],
        Backend::Redlock => lab
            .redlock()?
            .iter_mut()
            .map(RedisServer::process)
            .collect(),
        Backend::Zookeeper => vec![lab.zookeeper()?.process()],
        Backend::Sqlite => return Err("sqlite has no server".into()),
        other => return Err(failover_only(other)),
    })
}

/// The loopback ports a holder connects to for a backend.
fn server_ports(lab: &mut Lab, backend: Backend) -> Result<Vec<u16>, String> {
    Ok(match backend {
        Backend::Postgres => vec![lab.postgres()?.port()],
        Backend::Mysql => vec![lab.mysql()?.port()],
        Backend::Redis => vec![lab.redis()?.port()],
        Backend::RedisWait => vec![lab.redis_pair()?.0.port()],
        Backend::Redlock => lab.redlock()?.iter().map(RedisServer::port).collect(),
        Backend::Zookeeper => vec![lab.zookeeper()?.port()],
        Backend::Sqlite => return Err("sqlite has no server".into()),
        other => return Err(failover_only(other)),
    })
}

/// Kills and restarts the backend's server on the same port and data.
fn restart(lab: &mut Lab, backend: Backend) -> Result<(), String> {
    let restarted = match backend {
        Backend::Postgres => lab.postgres()?.restart(),
        Backend::Mysql => lab.mysql()?.restart(),
        Backend::Redis => lab.redis()?.restart(),
        Backend::Zookeeper => lab.zookeeper()?.restart(),
        _ => return Err(format!("no restart scenario for {}", backend.id())),
    };
    restarted.map_err(|e| e.to_string())
}
