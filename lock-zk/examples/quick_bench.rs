//! Quick throughput and wait-latency figures for lock-zk beside Apache Curator's
//! InterProcessMutex, on one spawned standalone ZooKeeper (default tick, default fsync).
//!
//! `cargo run --release -p lock-zk --example quick_bench [PAIRS] [CLIENTS] [ROUNDS]`
//! (defaults 500, 32, 20): PAIRS uncontended acquire+release pairs on one session, then CLIENTS
//! sessions taking one lock ROUNDS times each, timing every acquire's wait.

#[path = "../tests/support/curator.rs"]
mod curator;

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLockExt, LockName};
use lock_testkit::servers::ZkServer;
use lock_zk::{ZkConfig, ZkLock};
use tokio::time::Instant;

type Failure = Box<dyn std::error::Error>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Failure> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let pairs = args.first().copied().unwrap_or(500);
    let clients = args.get(1).copied().unwrap_or(32);
    let rounds = args.get(2).copied().unwrap_or(20);
    let server = ZkServer::start()?;
    let url = server.url();
    println!("ZooKeeper 3.8 standalone at {url} (tickTime 2000, forceSync default: yes)");
    println!("{pairs} uncontended pairs; {clients} clients x {rounds} rounds contended\n");

    let uncontended = lock_zk_uncontended(&url, pairs).await?;
    let (contended, p50, p99) = lock_zk_contended(&url, clients, rounds).await?;
    println!("| client | uncontended pairs/s | contended pairs/s | p50 wait ms | p99 wait ms |");
    println!("|---|---|---|---|---|");
    println!("| lock-zk | {uncontended:.1} | {contended:.1} | {p50:.2} | {p99:.2} |");

    match curator::Curator::compile() {
        None => println!("| Curator InterProcessMutex | skipped: Java or Curator missing | | | |"),
        Some(curator) => {
            let hosts = url.trim_start_matches("zk://").to_owned();
            let args = [pairs, clients, rounds].map(|n| n.to_string());
            let output = curator
                .command(&[
                    "bench",
                    &hosts,
                    "/distlock/bench-curator",
                    &args[0],
                    &args[1],
                    &args[2],
                ])
                .output()?;
            let text = String::from_utf8_lossy(&output.stdout);
            let field = |key: &str| -> Vec<String> {
                let line = text.lines().find_map(|line| line.strip_prefix(key));
                line.unwrap_or_default()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect()
            };
            let (single, many) = (field("uncontended "), field("contended "));
            match (single.as_slice(), many.as_slice()) {
                ([single], [many, p50, p99]) => println!(
                    "| Curator InterProcessMutex 5.4 | {single} | {many} | {p50} | {p99} |"
                ),
                _ => println!("| Curator InterProcessMutex | failed: {text} | | | |"),
            }
        }
    }
    Ok(())
}

async fn connect(url: &str) -> Result<ZkLock, Failure> {
    Ok(ZkLock::connect(ZkConfig::from_url(url)?).await?)
}

async fn lock_zk_uncontended(url: &str, pairs: usize) -> Result<f64, Failure> {
    let lock = connect(url).await?;
    let name = LockName::new("bench/uncontended")?;
    lock.acquire(&name).await?.release().await?;
    let started = Instant::now();
    for _ in 0..pairs {
        lock.acquire(&name).await?.release().await?;
    }
    Ok(pairs as f64 / started.elapsed().as_secs_f64())
}

async fn lock_zk_contended(
    url: &str,
    clients: usize,
    rounds: usize,
) -> Result<(f64, f64, f64), Failure> {
    let name = LockName::new("bench/contended")?;
    let mut locks = Vec::new();
    for _ in 0..clients {
        locks.push(Arc::new(connect(url).await?));
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for lock in locks {
        let name = name.clone();
        tasks.push(tokio::spawn(async move {
            let mut waits = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let asked = Instant::now();
                let guard = lock.acquire(&name).await?;
                waits.push(asked.elapsed());
                guard.release().await?;
            }
            Ok::<_, lock_core::Error>(waits)
        }));
    }
    let mut waits: Vec<Duration> = Vec::new();
    for task in tasks {
        waits.extend(task.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    waits.sort();
    let at = |q: f64| waits[((waits.len() as f64 * q) as usize).min(waits.len() - 1)];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok((waits.len() as f64 / elapsed, ms(at(0.5)), ms(at(0.99))))
}
