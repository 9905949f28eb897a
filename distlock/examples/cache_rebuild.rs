//! A cache rebuilt under the write lock while readers serve from it under read holds: readers
//! never see a half-built cache, and every rebuild is stamped with a fencing token above every
//! read before it.
//!
//! ```text
//! DISTLOCK_URL=redis://127.0.0.1:6379 cargo run -p distlock --features redis --example cache_rebuild
//! ```
//!
//! Without `DISTLOCK_URL` the readers and the rebuilder share an in-process `memory://`
//! service. The cache here is a map in this process; in a real service it is a shared store
//! that checks the token on every write.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use distlock::RwLockExt;
use tokio::sync::Mutex;

type Failure = Box<dyn std::error::Error + Send + Sync>;

const NAME: &str = "cache/prices";

/// The cache: a version per entry, all equal when the cache is whole.
type Cache = Arc<Mutex<BTreeMap<&'static str, u64>>>;

async fn rebuild(cache: &Cache, version: u64) {
    for item in ["apples", "pears", "plums"] {
        cache.lock().await.insert(item, version);
        // A rebuild takes time; a reader in between would see a mix of versions.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let url = std::env::var("DISTLOCK_URL").unwrap_or_else(|_| "memory://cache".to_owned());
    let cache: Cache = Arc::default();
    let rebuilder = distlock::connect(&url).await?;
    rebuilder
        .with_write(NAME, |hold| rebuild(&cache, hold.fencing_token()))
        .await?;
    let mut readers = Vec::new();
    for _ in 0..6 {
        let (locks, cache) = (distlock::connect(&url).await?, Arc::clone(&cache));
        readers.push(tokio::spawn(async move {
            let mut reads = 0;
            for _ in 0..20 {
                let versions = locks
                    .with_read(NAME, |_| async {
                        cache.lock().await.values().copied().collect::<Vec<_>>()
                    })
                    .await?;
                if versions.windows(2).any(|pair| pair[0] != pair[1]) {
                    return Err(format!("a reader saw a half-built cache: {versions:?}").into());
                }
                reads += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Ok::<usize, Failure>(reads)
        }));
    }
    let mut tokens = Vec::new();
    let cache = &cache;
    for _ in 0..5 {
        let token = rebuilder
            .with_write(NAME, |hold| async move {
                rebuild(cache, hold.fencing_token()).await;
                hold.fencing_token()
            })
            .await?;
        tokens.push(token);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut reads = 0;
    for reader in readers {
        reads += reader.await??;
    }
    if tokens.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(format!("rebuild tokens did not rise: {tokens:?}").into());
    }
    println!("{reads} reads and {} rebuilds on {url}", tokens.len());
    println!("no reader saw a half-built cache; rebuild tokens rose: {tokens:?}");
    Ok(())
}
