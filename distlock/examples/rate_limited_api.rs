//! Rate-limiting a third-party API with a semaphore: 12 clients, each with its own connection
//! (as 12 replicas would have), call a vendor that allows 3 calls at once.
//!
//! ```text
//! DISTLOCK_URL=redis://127.0.0.1:6379 cargo run -p distlock --features redis --example rate_limited_api
//! ```
//!
//! Without `DISTLOCK_URL` the clients share an in-process `memory://` service. The vendor
//! stand-in counts calls in flight; at the end the example checks that the peak was the
//! semaphore's limit and never above it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use distlock::SemaphoreExt;

type Failure = Box<dyn std::error::Error + Send + Sync>;

const PERMITS: u32 = 3;
const CLIENTS: usize = 12;
const CALLS: usize = 4;

/// The vendor's side: how many calls are in flight now, and the most ever.
#[derive(Default)]
struct Vendor {
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

impl Vendor {
    async fn call(&self, fencing_token: u64) -> u64 {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        fencing_token
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let url = std::env::var("DISTLOCK_URL").unwrap_or_else(|_| "memory://rate-limit".to_owned());
    let vendor = Arc::new(Vendor::default());
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        // One connection per client, as separate replicas of a service would have.
        let locks = distlock::connect(&url).await?;
        let vendor = Arc::clone(&vendor);
        clients.push(tokio::spawn(async move {
            for _ in 0..CALLS {
                locks
                    .with_permit("vendor/api", PERMITS, |permit| {
                        let vendor = Arc::clone(&vendor);
                        async move { vendor.call(permit.fencing_token()).await }
                    })
                    .await?;
            }
            Ok::<(), distlock::Error>(())
        }));
    }
    for client in clients {
        client.await??;
    }
    let peak = vendor.peak.load(Ordering::SeqCst);
    println!("{} calls by {CLIENTS} clients on {url}", CLIENTS * CALLS);
    if peak != PERMITS as usize {
        return Err(format!("{peak} calls in flight at the peak, not {PERMITS}").into());
    }
    println!("at most {PERMITS} calls in flight at once (peak {peak})");
    Ok(())
}
