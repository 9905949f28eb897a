//! Acquires a lock by URL, prints `acquired <fencing token>`, and holds it until killed.
//!
//! Usage: `lock-holder URL NAME [LEASE_MS]`. Cross-process crash tests kill it with SIGKILL and
//! measure how soon another process gets the lock.

use std::time::Duration;

use distlock::{AcquireOptions, DistributedLockExt};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(url), Some(name)) = (args.next(), args.next()) else {
        return Err("usage: lock-holder URL NAME [LEASE_MS]".into());
    };
    let mut options = AcquireOptions::builder();
    if let Some(lease) = args.next() {
        options = options.lease(Duration::from_millis(lease.parse()?));
    }
    let lock = distlock::connect(&url).await?;
    let guard = lock
        .acquire_timeout_with(name.as_str(), &options.build()?)
        .await?;
    println!("acquired {}", guard.fencing_token());
    tokio::select! {
        () = guard.lost().cancelled() => Err("lost the lock".into()),
        () = std::future::pending::<()>() => Ok(()),
    }
}
