//! A quick PostgreSQL throughput check: acquire+release pairs per second through `SqlLock`,
//! uncontended and with 32 contending clients, beside the same done by hand with
//! `INSERT ... ON CONFLICT DO NOTHING` / `DELETE` on the same server in the same run.
//!
//! `cargo run --release -p lock-sql --example pg_quick_bench [SECONDS]` starts a throwaway
//! PostgreSQL (or uses `LOCK_TEST_POSTGRES_URL`). Each client has its own pool, as a separate
//! process would. The hand-written lock has no lease, owner token, fencing or waiting: a
//! refused insert is retried after 1 ms.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind};
use lock_sql::SqlLock;
use lock_testkit::servers::{PostgresServer, external_url};
use sqlx::postgres::{PgPool, PgPoolOptions};

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Failure> {
    let seconds: u64 = std::env::args().nth(1).map_or(Ok(5), |s| s.parse())?;
    let run_for = Duration::from_secs(seconds);
    let server = match external_url("POSTGRES") {
        Some(url) => (None, url),
        None => {
            let server = PostgresServer::start()?;
            let url = server.url();
            (Some(server), url)
        }
    };
    let url = server.1.clone();
    let raw = PgPool::connect(&url).await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_raw (name TEXT PRIMARY KEY)")
        .execute(&raw)
        .await?;
    println!("PostgreSQL {}, {seconds} s per row", version(&raw).await?);
    println!("| lock | clients | pairs | pairs/s |");
    println!("|---|---|---|---|");
    for clients in [1, 32] {
        let pairs = run(clients, run_for, |name, stop| {
            let url = url.clone();
            async move { distlock_client(&url, &name, &stop).await }
        })
        .await?;
        report("lock-sql (SqlLock)", clients, pairs, run_for);
        let pairs = run(clients, run_for, |name, stop| {
            let url = url.clone();
            async move { raw_client(&url, &name, &stop).await }
        })
        .await?;
        report(
            "INSERT ON CONFLICT DO NOTHING / DELETE",
            clients,
            pairs,
            run_for,
        );
    }
    // The same 32 clients as tasks of one process sharing one `SqlLock` (one pool of 10, one
    // listening connection), to separate the cost of 32 listeners from that of the herd.
    let shared = SqlLock::builder(&url).pool_size(10).connect().await?;
    let pairs = run(32, run_for, |name, stop| {
        let lock = shared.clone();
        async move { locking_loop(&lock, &name, &stop).await }
    })
    .await?;
    report(
        "lock-sql, one SqlLock shared by 32 tasks",
        32,
        pairs,
        run_for,
    );
    drop(server);
    Ok(())
}

async fn version(pool: &PgPool) -> Result<String, Failure> {
    Ok(sqlx::query_scalar("SHOW server_version")
        .fetch_one(pool)
        .await?)
}

fn report(lock: &str, clients: usize, pairs: u64, run_for: Duration) {
    let rate = pairs as f64 / run_for.as_secs_f64();
    println!("| {lock} | {clients} | {pairs} | {rate:.0} |");
}

/// Runs `clients` clients on one fresh lock name for `run_for`; returns the pairs completed.
async fn run<F, Fut>(clients: usize, run_for: Duration, client: F) -> Result<u64, Failure>
where
    F: Fn(String, Arc<AtomicBool>) -> Fut,
    Fut: std::future::Future<Output = Result<u64, Failure>> + Send + 'static,
{
    let name = format!("bench/{:016x}", rand::random::<u64>());
    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (future, total) = (client(name.clone(), Arc::clone(&stop)), Arc::clone(&total));
        tasks.push(tokio::spawn(async move {
            let pairs = future.await?;
            total.fetch_add(pairs, Ordering::Relaxed);
            Ok::<(), Failure>(())
        }));
    }
    tokio::time::sleep(run_for).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await??;
    }
    Ok(total.load(Ordering::Relaxed))
}

/// Acquire and release through `SqlLock` until told to stop.
async fn distlock_client(url: &str, name: &str, stop: &AtomicBool) -> Result<u64, Failure> {
    let lock = SqlLock::builder(url).pool_size(2).connect().await?;
    locking_loop(&lock, name, stop).await
}

/// Acquire and release `name` on `lock` until told to stop.
async fn locking_loop(lock: &SqlLock, name: &str, stop: &AtomicBool) -> Result<u64, Failure> {
    let mut pairs = 0;
    while !stop.load(Ordering::Relaxed) {
        let guard = match lock.acquire_timeout(name, Duration::from_secs(1)).await {
            Ok(guard) => guard,
            Err(error) if error.kind() == ErrorKind::Timeout => continue,
            Err(error) => return Err(error.into()),
        };
        guard.release().await?;
        pairs += 1;
    }
    Ok(pairs)
}

/// The unique-row lock by hand: insert-or-nothing to acquire, delete to release.
async fn raw_client(url: &str, name: &str, stop: &AtomicBool) -> Result<u64, Failure> {
    let pool = PgPoolOptions::new().max_connections(1).connect(url).await?;
    let mut pairs = 0;
    while !stop.load(Ordering::Relaxed) {
        let inserted =
            sqlx::query("INSERT INTO bench_raw (name) VALUES ($1) ON CONFLICT DO NOTHING")
                .bind(name)
                .execute(&pool)
                .await?
                .rows_affected();
        if inserted == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        }
        sqlx::query("DELETE FROM bench_raw WHERE name = $1")
            .bind(name)
            .execute(&pool)
            .await?;
        pairs += 1;
    }
    Ok(pairs)
}
