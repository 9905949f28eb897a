//! Quick throughput and wait-time figures against a spawned Redis, beside a hand-written
//! `SET NX PX` + `EVALSHA` release lock that polls every 1 ms.
//!
//! `cargo run --release -p lock-redis --example quick_bench [seconds per scenario]`

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt};
use lock_redis::redis::{self, Script, aio::MultiplexedConnection};
use lock_testkit::servers::RedisServer;
use tokio::time::Instant;

const CLIENTS: usize = 32;

/// One contender's view of a lock: acquire (waiting), release.
trait Contender: Send + 'static {
    fn pair(&mut self, name: &str) -> impl Future<Output = Duration> + Send;
}

/// This crate's lock: `acquire` then `release`, returning the time spent waiting to acquire.
struct Ours(Arc<dyn DistributedLock>);

impl Contender for Ours {
    async fn pair(&mut self, name: &str) -> Duration {
        let started = Instant::now();
        let guard = self.0.acquire(name).await.expect("acquire");
        let waited = started.elapsed();
        guard.release().await.expect("release");
        waited
    }
}

/// The usual hand-written lock: `SET key token NX PX 30000`, retried every 1 ms, released by a
/// compare-and-delete script.
struct Polling {
    connection: MultiplexedConnection,
    release: Script,
}

impl Contender for Polling {
    async fn pair(&mut self, name: &str) -> Duration {
        let token = format!("{:032x}", rand::random::<u128>());
        let started = Instant::now();
        loop {
            let set: Option<String> = redis::cmd("SET")
                .arg(name)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(30_000)
                .query_async(&mut self.connection)
                .await
                .expect("SET");
            if set.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let waited = started.elapsed();
        let mut release = self.release.key(name);
        release.arg(&token);
        let _: i64 = release
            .invoke_async(&mut self.connection)
            .await
            .expect("release");
        waited
    }
}

struct Figures {
    pairs: usize,
    per_second: f64,
    waits: Vec<Duration>,
    per_client: Vec<usize>,
}

/// Runs `contenders` on one lock name for `length`; each records its acquire waits.
async fn run<C: Contender>(contenders: Vec<C>, name: &str, length: Duration) -> Figures {
    let started = Instant::now();
    let end = started + length;
    let tasks: Vec<_> = contenders
        .into_iter()
        .map(|mut contender| {
            let name = name.to_owned();
            tokio::spawn(async move {
                let mut waits = Vec::new();
                while Instant::now() < end {
                    waits.push(contender.pair(&name).await);
                }
                waits
            })
        })
        .collect();
    let mut waits = Vec::new();
    let mut per_client = Vec::new();
    for task in tasks {
        let mine = task.await.expect("contender");
        per_client.push(mine.len());
        waits.extend(mine);
    }
    let elapsed = started.elapsed().as_secs_f64();
    waits.sort();
    Figures {
        pairs: waits.len(),
        per_second: waits.len() as f64 / elapsed,
        waits,
        per_client,
    }
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn report(label: &str, figures: &Figures) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (min, max) = (
        figures.per_client.iter().min().copied().unwrap_or(0),
        figures.per_client.iter().max().copied().unwrap_or(0),
    );
    println!(
        "| {label} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {min}..{max} |",
        figures.pairs,
        figures.per_second,
        ms(quantile(&figures.waits, 0.5)),
        ms(quantile(&figures.waits, 0.9)),
        ms(quantile(&figures.waits, 0.99)),
        ms(quantile(&figures.waits, 1.0)),
    );
}

async fn ours(url: &str, n: usize) -> Vec<Ours> {
    let mut clients = Vec::new();
    for _ in 0..n {
        clients.push(Ours(lock_redis::connect(url).await.expect("connect")));
    }
    clients
}

async fn polling(url: &str, n: usize) -> Vec<Polling> {
    let client = redis::Client::open(url).expect("url");
    let mut clients = Vec::new();
    for _ in 0..n {
        clients.push(Polling {
            connection: client
                .get_multiplexed_async_connection()
                .await
                .expect("connect"),
            release: Script::new(
                "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                 return redis.call('DEL', KEYS[1]) end return 0",
            ),
        });
    }
    clients
}

#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(3);
    let length = Duration::from_secs(seconds);
    let server = RedisServer::start().expect("redis-server (run scripts/install-servers)");
    let url = server.url();
    let version = server.command("INFO server").unwrap_or_default();
    let version = version
        .lines()
        .find_map(|line| line.strip_prefix("redis_version:"))
        .unwrap_or("?")
        .trim()
        .to_owned();
    println!("redis {version} on 127.0.0.1, {seconds} s per scenario, {CLIENTS} contenders");
    println!();
    println!(
        "| scenario | pairs | pairs/s | p50 wait ms | p90 wait ms | p99 wait ms | max wait ms | pairs per client |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    report(
        "lock-redis, 1 client",
        &run(ours(&url, 1).await, "bench/ours-1", length).await,
    );
    report(
        "SET NX PX + 1 ms poll, 1 client",
        &run(polling(&url, 1).await, "bench/poll-1", length).await,
    );
    report(
        &format!("lock-redis, {CLIENTS} clients"),
        &run(ours(&url, CLIENTS).await, "bench/ours-n", length).await,
    );
    report(
        &format!("SET NX PX + 1 ms poll, {CLIENTS} clients"),
        &run(polling(&url, CLIENTS).await, "bench/poll-n", length).await,
    );
}
