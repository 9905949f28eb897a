//! A pool of workers that processes each order exactly once.
//!
//! ```text
//! cargo run -p distlock --features sqlite --example order_workers
//! ```
//!
//! Every worker (its own connection, as a separate process would have) walks the whole order
//! list in its own random order. For each order it tries the order's lock; holding it, it checks
//! whether the order is done and, if not, processes it and marks it done. The lock makes the
//! check and the processing one step, so no order is processed twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use distlock::DistributedLockExt;

const WORKERS: usize = 4;
const ORDERS: u32 = 24;

/// Which worker processed each order: stands in for the orders table.
type Processed = Arc<Mutex<HashMap<u32, Vec<usize>>>>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("distlock-orders-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url = format!("sqlite://{}", dir.join("locks.db").display());
    let processed: Processed = Arc::default();

    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        let (url, processed) = (url.clone(), Arc::clone(&processed));
        workers.push(tokio::spawn(
            async move { work(worker, &url, &processed).await },
        ));
    }
    for worker in workers {
        worker.await??;
    }

    let processed = processed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    for order in 0..ORDERS {
        match processed.get(&order).map(Vec::as_slice) {
            Some([worker]) => println!("order {order}: processed once, by worker {worker}"),
            other => {
                return Err(
                    format!("order {order} processed by {other:?}, not exactly once").into(),
                );
            }
        }
    }
    println!("{ORDERS} orders, {WORKERS} workers: every order processed exactly once");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

async fn work(worker: usize, url: &str, processed: &Processed) -> Result<(), distlock::Error> {
    let locks = distlock::connect(url).await?;
    let mut orders: Vec<u32> = (0..ORDERS).collect();
    orders.rotate_left(worker * ORDERS as usize / WORKERS);
    for order in orders {
        let Some(guard) = locks.try_acquire(format!("orders/{order}")).await? else {
            continue;
        };
        let done = processed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&order);
        if !done {
            tokio::time::sleep(Duration::from_millis(5)).await; // charge the card, ship the parcel
            processed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(order)
                .or_default()
                .push(worker);
        }
        guard.release().await?;
    }
    Ok(())
}
