//! Three replicas of a small HTTP service: one is elected and runs a periodic job stamped with
//! its epoch; every replica answers `GET /leader` from an observer of the election.
//!
//! ```text
//! cargo run -p distlock --features sqlite --example elected_replicas
//! DISTLOCK_URL=redis://127.0.0.1:6379 cargo run -p distlock --features sqlite,redis --example elected_replicas
//! ```
//!
//! The replicas share one lock service (`DISTLOCK_URL`, by default an SQLite file) but nothing
//! else. The example waits until all three name the same leader, shuts that replica down,
//! waits until the other two name a new one, and checks that the job store took every job in
//! rising epochs and refused none.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use distlock::{DistributedLock, ElectionExt, Leader};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

const ELECTION: &str = "examples/scheduler";

/// The store the job writes to: it keeps the highest epoch it saw and refuses lower ones, as
/// a database row with an epoch column would.
#[derive(Debug, Default)]
struct JobStore {
    highest: u64,
    runs: Vec<(u64, String)>,
    refused: usize,
}

impl JobStore {
    fn run(&mut self, epoch: u64, replica: &str) {
        if epoch < self.highest {
            self.refused += 1;
            return;
        }
        self.highest = epoch;
        self.runs.push((epoch, replica.to_owned()));
    }
}

/// One replica: its address (what it publishes as leader) and the tasks that serve, follow the
/// election and campaign.
struct Replica {
    addr: SocketAddr,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// `GET /leader`: the leader the observer saw last, or 503 while nobody leads.
async fn leader(State(seen): State<watch::Receiver<Option<Leader>>>) -> (StatusCode, String) {
    match &*seen.borrow() {
        Some(leader) => (StatusCode::OK, format!("{} {}", leader.value, leader.epoch)),
        None => (StatusCode::SERVICE_UNAVAILABLE, "no leader".to_owned()),
    }
}

/// Campaigns until elected, runs the job every 100 ms while leading, and campaigns again if the
/// leadership is lost.
async fn campaign(locks: Arc<dyn DistributedLock>, me: String, store: Arc<Mutex<JobStore>>) {
    loop {
        let Ok(leading) = locks.campaign(ELECTION, &me).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        while !leading.is_lost() {
            let epoch = leading.epoch();
            store
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .run(epoch, &me);
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
                () = leading.at_risk().cancelled() => break,
            }
        }
    }
}

/// Follows the election, publishing each leader it sees to the `/leader` handler.
async fn follow(locks: Arc<dyn DistributedLock>, seen: watch::Sender<Option<Leader>>) {
    let Ok(observer) = locks.observe(ELECTION) else {
        return;
    };
    let mut observer = observer.poll_every(Duration::from_secs(1));
    loop {
        if let Ok(change) = observer.next_change().await {
            seen.send_replace(change.leader);
        }
    }
}

async fn start(
    url: &str,
    store: &Arc<Mutex<JobStore>>,
) -> Result<Replica, Box<dyn std::error::Error>> {
    let locks = distlock::connect(url).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (sender, seen) = watch::channel(None);
    let app = Router::new().route("/leader", get(leader)).with_state(seen);
    let serve = async move {
        let _ = axum::serve(listener, app).await;
    };
    let tasks = vec![
        tokio::spawn(serve),
        tokio::spawn(follow(Arc::clone(&locks), sender)),
        tokio::spawn(campaign(locks, addr.to_string(), Arc::clone(store))),
    ];
    Ok(Replica { addr, tasks })
}

/// Asks every replica in `replicas` for `/leader` until all name the same one that `accept`
/// takes, within 10 s.
async fn agreed(
    replicas: &[&Replica],
    accept: impl Fn(&str) -> bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut answers = Vec::new();
        for replica in replicas {
            answers.push(get_leader(replica.addr).await?);
        }
        let first = answers[0].clone();
        if answers.iter().all(|answer| *answer == first) && accept(&first) {
            return Ok(first);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("the replicas never agreed: {answers:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("distlock-elected-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let sqlite = format!("sqlite://{}", dir.join("locks.db").display());
    let url = std::env::var("DISTLOCK_URL").unwrap_or(sqlite);
    let store = Arc::new(Mutex::new(JobStore::default()));
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(start(&url, &store).await?);
    }
    let all: Vec<&Replica> = replicas.iter().collect();
    let first = agreed(&all, |answer| answer.contains(' ')).await?;
    let first_addr = first.split(' ').next().unwrap_or_default().to_owned();
    println!(
        "all three replicas see {first_addr} leading (epoch {})",
        &first[first_addr.len() + 1..]
    );
    let at = replicas
        .iter()
        .position(|r| r.addr.to_string() == first_addr);
    let stopped = replicas.remove(at.ok_or("the leader is not one of the replicas")?);
    for task in &stopped.tasks {
        task.abort(); // the leadership is dropped with its task: it resigns
    }
    let rest: Vec<&Replica> = replicas.iter().collect();
    let next = agreed(&rest, |answer| {
        answer.contains(' ') && !answer.starts_with(&first_addr)
    })
    .await?;
    println!("after {first_addr} shut down, both others see {next}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let store = store.lock().unwrap_or_else(|e| e.into_inner());
    let leaders: std::collections::BTreeSet<&str> =
        store.runs.iter().map(|(_, r)| r.as_str()).collect();
    let rising = store.runs.windows(2).all(|pair| pair[0].0 <= pair[1].0);
    println!(
        "{} job runs by {} leaders, epochs rising: {rising}, refused: {}",
        store.runs.len(),
        leaders.len(),
        store.refused
    );
    std::fs::remove_dir_all(&dir)?;
    if !rising || store.refused != 0 || leaders.len() != 2 {
        return Err("the job ran out of epoch order, was refused, or did not change hands".into());
    }
    Ok(())
}

/// A minimal HTTP/1.1 client: `GET /leader`, returning the body of a 200 or `""`.
async fn get_leader(addr: SocketAddr) -> Result<String, Box<dyn std::error::Error>> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let request = format!("GET /leader HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await?;
    let ok = reply.starts_with("HTTP/1.1 200");
    let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default().trim();
    Ok(if ok { body.to_owned() } else { String::new() })
}
