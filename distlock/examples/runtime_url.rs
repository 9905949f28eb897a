//! The backend chosen at run time from a URL, as configuration would choose it.
//!
//! ```text
//! cargo run -p distlock --features full --example runtime_url -- [URL]
//! ```
//!
//! The URL comes from the first argument or `DISTLOCK_URL`; without either, an SQLite file in a
//! temp directory.

use std::time::Duration;

use distlock::DistributedLockExt;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("distlock-runtime-url-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("DISTLOCK_URL").ok())
        .unwrap_or_else(|| format!("sqlite://{}", dir.join("locks.db").display()));

    let locks = distlock::connect(&url).await?;
    println!("backend {:?} from {url}", locks.backend());
    println!("capabilities {:?}", locks.capabilities());

    let guard = locks
        .acquire_timeout("examples/runtime-url", Duration::from_secs(10))
        .await?;
    println!("acquired with fencing token {}", guard.fencing_token());
    guard.release().await?;

    let doubled = locks
        .with_lock("examples/runtime-url", || async { 21 * 2 })
        .await?;
    println!("with_lock returned {doubled}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
