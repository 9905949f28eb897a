//! A periodic job that runs on exactly one replica per tick.
//!
//! ```text
//! cargo run -p distlock --features sqlite --example cron_singleton
//! ```
//!
//! Three replicas (each with its own connection, as separate hosts would have) wake at every
//! tick and `try_acquire` the tick's lock. The winner runs the job and keeps the lock until the
//! tick's slot ends, so a replica that wakes late cannot run the same tick again; the others
//! skip it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use distlock::{AcquireOptions, DistributedLockExt};

const REPLICAS: usize = 3;
const TICKS: u64 = 4;
const SLOT: Duration = Duration::from_millis(400);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("distlock-cron-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url = format!("sqlite://{}", dir.join("locks.db").display());
    let runs: Arc<Mutex<Vec<(u64, usize)>>> = Arc::default();
    let start = tokio::time::Instant::now();

    let mut replicas = Vec::new();
    for replica in 0..REPLICAS {
        let (url, runs) = (url.clone(), Arc::clone(&runs));
        replicas.push(tokio::spawn(async move {
            run_replica(replica, &url, start, &runs).await
        }));
    }
    for replica in replicas {
        replica.await??;
    }

    let runs = runs.lock().unwrap_or_else(PoisonError::into_inner).clone();
    for tick in 0..TICKS {
        let ran: Vec<usize> = runs
            .iter()
            .filter(|(t, _)| *t == tick)
            .map(|(_, r)| *r)
            .collect();
        if ran.len() != 1 {
            return Err(format!("tick {tick} ran on replicas {ran:?}, not exactly one").into());
        }
    }
    println!("each of {TICKS} ticks ran on exactly one of {REPLICAS} replicas");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

async fn run_replica(
    replica: usize,
    url: &str,
    start: tokio::time::Instant,
    runs: &Mutex<Vec<(u64, usize)>>,
) -> Result<(), distlock::Error> {
    let locks = distlock::connect(url).await?;
    // The lease outlives the slot even if this replica stalls, so the tick cannot run twice.
    let options = AcquireOptions::builder()
        .wait(Duration::ZERO)
        .lease(SLOT * 4)
        .build()?;
    for tick in 0..TICKS {
        let slot_start = start + SLOT * tick as u32;
        // Replicas' clocks and schedulers never agree exactly: wake a little apart.
        tokio::time::sleep_until(slot_start + Duration::from_millis(10 * replica as u64)).await;
        let name = format!("cron/cleanup/{tick}");
        let Some(guard) = locks.acquire_with_options(name.as_str(), &options).await? else {
            println!("tick {tick}: replica {replica} skips, another replica has it");
            continue;
        };
        println!(
            "tick {tick}: replica {replica} runs the job (fencing token {})",
            guard.fencing_token()
        );
        runs.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((tick, replica));
        tokio::time::sleep(Duration::from_millis(50)).await; // the job
        tokio::time::sleep_until(slot_start + SLOT).await;
        guard.release().await?;
    }
    Ok(())
}
