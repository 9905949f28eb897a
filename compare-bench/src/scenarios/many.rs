//! Scenario 7, many locks: 1 to 100,000 distinct names held at once by one client: acquire
//! throughput, the server's and the client's memory per held lock, and what keeping the holds
//! alive costs (requests and round trips per renewal period, client CPU).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{StreamExt, stream};
use lock_core::{DistributedLockExt, LockGuard};

use crate::BenchResult;
use crate::counters;
use crate::heap::live_bytes;
use crate::record::Record;
use crate::scenarios::counted::Counted;
use crate::scenarios::holding::{self, Window};
use crate::scenarios::{Ctx, fresh_name};
use crate::servers::Servers;

/// The scenario id.
pub const ID: &str = "many";

/// Acquisitions in flight at once.
const PARALLEL: usize = 16;

/// The fewest holds whose heap reading is stated per hold: below, the process's other
/// allocations (runtime, connections) outweigh the holds.
pub const MIN_HELD_FOR_CLIENT_MEMORY: usize = 100;

/// Renewal periods between the last grant and the hold window: holds taken over more than
/// half a period come to renew together within a period or two (see lock-core's lease
/// scheduler), and the window measures the pace after that.
pub const SETTLE_PERIODS: u32 = 1;

/// The numbers of locks held at once.
pub fn counts(quick: bool) -> Vec<usize> {
    if quick {
        vec![1, 100, 1000]
    } else {
        vec![1, 100, 10_000, 100_000]
    }
}

/// The lease the holds are taken with, how long taking them may last, and how long they are
/// kept: two renewal periods (one alone may end just before a renewal it should count).
pub fn window(quick: bool) -> Window {
    let lease = Duration::from_secs(if quick { 3 } else { 30 });
    let reach = Duration::from_secs(if quick { 60 } else { 120 });
    Window {
        lease,
        reach,
        periods: 2,
    }
}

/// Runs each backend at each count.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-way, it may leave keys, rows or nodes of its run on the
/// benchmark's servers; the runner always runs it to completion.
///
/// # Errors
///
/// None of its own: a point that fails is noted as skipped.
pub async fn run(ctx: &mut Ctx) -> BenchResult<()> {
    let (counts, window) = (counts(ctx.quick), window(ctx.quick));
    for backend in ["redis", "zookeeper", "postgres", "mysql"] {
        if !ctx.wants(backend) {
            continue;
        }
        for &count in &counts {
            match measure(&ctx.servers, backend, count, window).await {
                Ok(record) => ctx.push(record),
                Err(error) => ctx.skip(format!("{ID}: {backend} x{count}: {error}")),
            }
        }
    }
    Ok(())
}

/// Server memory in bytes attributable to locks, and what was read.
async fn memory(
    servers: &Servers,
    backend: &str,
    table: &str,
) -> BenchResult<Option<(u64, &'static str)>> {
    Ok(match backend {
        "redis" => Some((
            counters::redis_memory(&servers.redis).await?,
            "INFO memory used_memory",
        )),
        "zookeeper" => {
            let mntr = counters::zk_mntr(&servers.zookeeper)?;
            let size = counters::mntr_number(&mntr, "zk_approximate_data_size") as u64;
            Some((size, "mntr zk_approximate_data_size"))
        }
        "postgres" => Some((
            counters::pg_table_size(&servers.postgres, table).await?,
            "pg_total_relation_size of the lock table",
        )),
        "mysql" => Some((
            counters::mysql_table_size(&servers.mysql, table).await?,
            "information_schema data_length + index_length of the lock table",
        )),
        _ => None,
    })
}

async fn measure(
    servers: &Servers,
    backend: &str,
    count: usize,
    window: Window,
) -> BenchResult<Record> {
    let table = format!("bench_many_{}", rand::random::<u32>());
    let lease = format!("lease={}ms", window.lease.as_millis());
    let url = match backend {
        "postgres" | "mysql" => format!(
            "{}?table={table}&pool_size={PARALLEL}&{lease}",
            servers.url(backend)
        ),
        // ZooKeeper's lease is its session: as long as the others' leases, so that every
        // backend renews (or confirms) its holds as often.
        "zookeeper" => format!(
            "{}?session_timeout={}ms",
            servers.url(backend),
            window.lease.as_millis()
        ),
        _ => format!("{}?{lease}", servers.url(backend)),
    };
    let counted = Counted::connect(backend, &url).await?;
    let lock = Arc::clone(&counted.lock);
    let prefix = fresh_name(ID);
    // The table exists (empty) before the first reading.
    lock.acquire(format!("{prefix}/warm"))
        .await?
        .release()
        .await?;
    let before = memory(servers, backend, &table).await?;
    let heap_before = live_bytes();
    let started = Instant::now();
    let guards: Vec<BenchResult<LockGuard>> = stream::iter(0..count)
        .map(|i| {
            let (lock, name) = (lock.clone(), format!("{prefix}/{i}"));
            async move { Ok(lock.acquire(name).await?) }
        })
        .buffer_unordered(PARALLEL)
        .take_until(tokio::time::sleep(window.reach))
        .collect()
        .await;
    let seconds = started.elapsed().as_secs_f64();
    let guards: Vec<LockGuard> = guards.into_iter().collect::<BenchResult<_>>()?;
    if guards.len() < count {
        let held = guards.len();
        release_all(guards).await;
        return Err(format!(
            "{held} of {count} held when the {} s budget ran out ({} acquisitions/s on average)",
            window.reach.as_secs(),
            held as u64 / window.reach.as_secs().max(1)
        )
        .into());
    }
    let after = memory(servers, backend, &table).await?;
    let mut record = Record::new(
        ID,
        &format!("distlock {}", env!("CARGO_PKG_VERSION")),
        backend,
    );
    record.clients = 1;
    record.ops = count as u64;
    record.seconds = seconds;
    record.ops_per_s = count as f64 / seconds.max(1e-9);
    record = record
        .with("held", count as u64)
        .with("parallel", PARALLEL as u64);
    if let (Some((before, source)), Some((after, _))) = (before, after) {
        let per_lock = (after as f64 - before as f64) / count as f64;
        record = record
            .with("bytes_per_lock", per_lock.round())
            .with("memory_source", source);
    }
    tokio::time::sleep(window.period() * SETTLE_PERIODS).await;
    let (mut record, heap) =
        holding::measure(servers, backend, &guards, window, &counted, record).await?;
    // The rest of the process allocates and frees tens of KiB meanwhile: only a reading over
    // many holds says something per hold. What a hold costs is the heap between renewals; a
    // batch of renewals in flight adds its own, reported as the peak.
    if count >= MIN_HELD_FOR_CLIENT_MEMORY {
        let per_lock = |live: usize| ((live as f64 - heap_before as f64) / count as f64).round();
        record = record
            .with("client_bytes_per_lock", per_lock(heap.least))
            .with("client_peak_bytes_per_lock", per_lock(heap.most));
    }
    // A hold lost in the window fails its release; the others must all succeed.
    let lost = guards.iter().filter(|guard| guard.is_lost()).count();
    let failed = release_all(guards).await;
    if failed > lost {
        return Err(format!("{failed} of {count} releases failed, {lost} holds were lost").into());
    }
    Ok(record)
}

/// Releases every guard, 16 at a time; returns how many releases failed.
async fn release_all(guards: Vec<LockGuard>) -> usize {
    stream::iter(guards)
        .map(|guard| async move { guard.release().await.is_err() })
        .buffer_unordered(PARALLEL)
        .filter(|failed| std::future::ready(*failed))
        .count()
        .await
}
