//! Scenario 3, cost of waiting: N clients wait on a held lock; what the waiting costs the server
//! (requests per second) and the client (CPU), then what each release costs while they drain.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::BenchResult;
use crate::counters;
use crate::cpu::process_cpu;
use crate::monitor::RedisMonitor;
use crate::record::Record;
use crate::scenarios::{BACKENDS, Ctx, Kind, client, clients, fresh_name};
use crate::servers::Servers;

/// The scenario id.
pub const ID: &str = "waiting";

/// The systems compared: distlock on each server, the polling peers, and the floor of
/// distlock's own MySQL statements waiting in line (what a drain costs that server at least).
pub fn kinds() -> Vec<Kind> {
    let mut kinds: Vec<Kind> = BACKENDS[2..].iter().map(|b| Kind::Distlock(b)).collect();
    kinds.extend([
        Kind::RedisPoll(1),
        Kind::RedisPoll(100),
        Kind::RsLock,
        Kind::PgRow(1),
        Kind::PgAdvisory,
        Kind::MySqlStatementFloor,
    ]);
    kinds
}

/// Requests the server of `backend` has served so far (the unit differs per server: Redis
/// commands, ZooKeeper packets, PostgreSQL statements, MariaDB statements).
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// The counter's query failed.
pub async fn server_requests(
    servers: &Servers,
    backend: &str,
    monitor: Option<&RedisMonitor>,
) -> BenchResult<u64> {
    match (backend, monitor) {
        ("redis", Some(monitor)) => {
            // MONITOR lines arrive asynchronously: let the ones already sent land.
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(monitor.count())
        }
        (backend, _) => server_counter(servers, backend).await,
    }
}

/// The request counter of `backend`'s server (see [`request_unit`]).
///
/// # Cancel safety
///
/// Cancel safe: it only reads.
///
/// # Errors
///
/// The counter's error, or a backend without one.
pub async fn server_counter(servers: &Servers, backend: &str) -> BenchResult<u64> {
    match backend {
        "redis" => counters::redis_commands(&servers.redis).await,
        "zookeeper" => counters::zk_packets(&servers.zookeeper),
        "postgres" => counters::pg_statements(&servers.postgres).await,
        "mysql" => counters::mysql_questions(&servers.mysql).await,
        other => Err(format!("no request counter for {other}").into()),
    }
}

/// What the counter of `backend` counts.
pub fn request_unit(backend: &str) -> &'static str {
    match backend {
        "redis" => "client commands (MONITOR)",
        "zookeeper" => "packets received (mntr)",
        "postgres" => "statements (pg_stat_statements)",
        "mysql" => "statements (Questions)",
        _ => "requests",
    }
}

/// Runs every system with the run's number of waiters.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a system that fails is noted as skipped.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let waiters = ctx.pick(8, 16);
    let window = Duration::from_secs(ctx.pick(2, 5));
    for kind in kinds() {
        match measure(&ctx.servers, kind, waiters, window).await {
            Ok(record) => ctx.push(record),
            Err(error) => ctx.skip(format!("{ID}: {}: {error}", kind.system())),
        }
    }
    Ok(())
}

async fn measure(
    servers: &Servers,
    kind: Kind,
    waiters: usize,
    window: Duration,
) -> BenchResult<Record> {
    let backend = kind.backend();
    let name = fresh_name(ID);
    let monitor = match backend {
        "redis" => Some(RedisMonitor::start(&servers.redis)?),
        _ => None,
    };
    let monitor = monitor.as_ref();
    let holder = client(kind, servers, &name).await?;
    let held = holder.acquire().await?;
    let opened = clients(kind, servers, &name, waiters).await?;
    let mut tasks = Vec::new();
    for waiter in opened {
        let waiter = Arc::clone(&waiter);
        tasks.push(tokio::spawn(async move {
            let held = waiter.acquire().await?;
            held.release().await?;
            Ok::<_, crate::BenchError>(())
        }));
    }
    // Let every waiter reach its waiting state before the window opens.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stats_0 = server_counter(servers, backend).await?;
    let (requests_0, cpu_0, started) = (
        server_requests(servers, backend, monitor).await?,
        process_cpu(),
        Instant::now(),
    );
    tokio::time::sleep(window).await;
    let stats_1 = server_counter(servers, backend).await?;
    let (requests_1, cpu_1, seconds) = (
        server_requests(servers, backend, monitor).await?,
        process_cpu(),
        started.elapsed().as_secs_f64(),
    );
    let drained = Instant::now();
    held.release().await?;
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(60), task).await???;
    }
    let drain_seconds = drained.elapsed().as_secs_f64();
    let requests_2 = server_requests(servers, backend, monitor).await?;
    let waiting = requests_1.saturating_sub(requests_0) as f64;
    let cpu = match (cpu_0, cpu_1) {
        (Some(before), Some(after)) => after.saturating_sub(before).as_secs_f64(),
        _ => f64::NAN,
    };
    let releases = (waiters + 1) as f64;
    let mut record = Record::new(ID, &kind.system(), backend);
    record.clients = waiters;
    record.ops = waiters as u64;
    record.seconds = seconds;
    record.ops_per_s = waiters as f64 / drain_seconds.max(1e-9);
    Ok(record
        .with("request_unit", request_unit(backend))
        .with("server_requests_per_s_waiting", round2(waiting / seconds))
        .with(
            "requests_per_waiter_per_s",
            round2(waiting / seconds / waiters as f64),
        )
        .with("client_cpu_percent", round2(cpu / seconds * 100.0))
        .with(
            "requests_per_release",
            round2(requests_2.saturating_sub(requests_1) as f64 / releases),
        )
        .with("drain_seconds", round2(drain_seconds))
        .with(
            "server_counter_per_s_waiting",
            round2(stats_1.saturating_sub(stats_0) as f64 / seconds),
        ))
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}
