//! Several worker processes contend for one lock and print their fencing tokens.
//!
//! ```text
//! cargo run -p distlock --features sqlite --example workers [-- --url URL --workers N --rounds R]
//! ```
//!
//! Without `--url` the workers share an SQLite file in a temp directory: no server needed. Each
//! worker appends `<token> <worker>` to a journal while it holds the lock, so the journal is in
//! grant order; at the end the parent checks that fencing tokens strictly increased.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use distlock::DistributedLockExt;

type Failure = Box<dyn std::error::Error>;

const LOCK: &str = "examples/nightly-report";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if let (Some(url), Some(id), Some(journal)) =
        (flag("--worker-url"), flag("--worker-id"), flag("--journal"))
    {
        let rounds = flag("--rounds").map_or(Ok(5), |r| r.parse())?;
        return work(&url, &id, Path::new(&journal), rounds).await;
    }
    let workers: usize = flag("--workers").map_or(Ok(4), |w| w.parse())?;
    let rounds: usize = flag("--rounds").map_or(Ok(5), |r| r.parse())?;
    let dir = std::env::temp_dir().join(format!("distlock-workers-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url =
        flag("--url").unwrap_or_else(|| format!("sqlite://{}", dir.join("locks.db").display()));
    let journal = dir.join("journal");
    println!("{workers} worker processes contend for {LOCK:?} on {url}");
    let children: Vec<Child> = (0..workers)
        .map(|id| spawn_worker(&url, id, &journal, rounds))
        .collect::<Result<_, _>>()?;
    for mut child in children {
        let status = child.wait()?;
        if !status.success() {
            return Err(format!("a worker failed: {status}").into());
        }
    }
    let verdict = check_journal(&journal);
    std::fs::remove_dir_all(&dir)?;
    let grants = verdict?;
    println!(
        "{grants} grants to {workers} processes; fencing tokens strictly increased in grant order"
    );
    Ok(())
}

fn spawn_worker(url: &str, id: usize, journal: &Path, rounds: usize) -> std::io::Result<Child> {
    Command::new(std::env::current_exe()?)
        .args([
            "--worker-url",
            url,
            "--worker-id",
            &id.to_string(),
            "--rounds",
            &rounds.to_string(),
        ])
        .arg("--journal")
        .arg(journal)
        .spawn()
}

/// One worker: acquire, record the token in the journal while holding, release; `rounds` times.
async fn work(url: &str, id: &str, journal: &Path, rounds: usize) -> Result<(), Failure> {
    let locks = distlock::connect(url).await?;
    for _ in 0..rounds {
        let guard = locks.acquire_timeout(LOCK, Duration::from_secs(60)).await?;
        let token = guard.fencing_token();
        println!("worker {id} holds {LOCK:?} with fencing token {token}");
        append(journal, &format!("{token} {id}\n"))?;
        tokio::time::sleep(Duration::from_millis(20)).await;
        guard.release().await?;
    }
    Ok(())
}

fn append(journal: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(journal)?
        .write_all(line.as_bytes())
}

/// Returns the number of grants if tokens strictly increase down the journal.
fn check_journal(journal: &PathBuf) -> Result<usize, Failure> {
    let text = std::fs::read_to_string(journal)?;
    let tokens: Vec<u64> = text
        .lines()
        .filter_map(|line| line.split(' ').next()?.parse().ok())
        .collect();
    if let Some(pair) = tokens.windows(2).find(|pair| pair[0] >= pair[1]) {
        return Err(format!("fencing token {} was followed by {}", pair[0], pair[1]).into());
    }
    Ok(tokens.len())
}
