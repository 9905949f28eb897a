//! A service that runs guarded jobs and shows what its locks do: `/metrics` for Prometheus,
//! `/locks/NAME` from `inspect`, and log lines when a hold is at risk or lost.
//!
//! ```text
//! cargo run -p distlock --features sqlite,metrics --example observed_jobs
//! ```
//!
//! Two replicas (two lock services labelled `replica-a` and `replica-b`, sharing one SQLite
//! file) compete for `jobs/reindex`; one overrunning job hits its `max_hold` and is stopped by
//! its lost signal. The example then asks its own HTTP server who holds the lock and prints the
//! distlock lines of `/metrics`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use distlock::{AcquireOptions, DistributedLock, DistributedLockExt, LockName};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone)]
struct App {
    locks: Arc<dyn DistributedLock>,
    metrics: PrometheusHandle,
}

/// `GET /locks/NAME`: the holder, its token and lease left, and the number of waiters.
async fn lock_status(State(app): State<App>, Path(name): Path<String>) -> String {
    let status = match LockName::new(name) {
        Ok(name) => app.locks.inspect(&name).await,
        Err(error) => Err(error),
    };
    match status {
        Ok(status) if status.is_idle() => "free, nobody waiting\n".to_owned(),
        Ok(status) => {
            let mut text = String::new();
            for holder in &status.holders {
                let left = holder.lease_left.unwrap_or_default();
                text += &format!(
                    "held by {} with fencing token {}, {} ms of lease left\n",
                    holder.owner_label,
                    holder.fencing_token,
                    left.as_millis()
                );
            }
            text + &format!("{} waiting\n", status.waiters)
        }
        Err(error) => format!("{error}\n"),
    }
}

/// One replica's jobs: `runs` tries at `jobs/reindex`, each waiting at most 50 ms.
async fn replica(locks: Arc<dyn DistributedLock>, runs: u32) -> Result<(u32, u32), Failure> {
    let (mut done, mut skipped) = (0, 0);
    for _ in 0..runs {
        match locks
            .acquire_timeout("jobs/reindex", Duration::from_millis(50))
            .await
        {
            Ok(guard) => {
                tokio::time::sleep(Duration::from_millis(80)).await; // the job
                guard.release().await?;
                done += 1;
                tokio::time::sleep(Duration::from_millis(40)).await; // other work
            }
            Err(error) if error.kind() == distlock::ErrorKind::Timeout => skipped += 1,
            Err(error) => return Err(error.into()),
        }
    }
    Ok((done, skipped))
}

/// A job that overruns its `max_hold`: its lost signal stops it.
async fn overrunning_job(locks: &dyn DistributedLock) -> Result<bool, Failure> {
    let options = AcquireOptions::builder()
        .lease(Duration::from_millis(300))
        .max_hold(Duration::from_millis(600))
        .build()?;
    let name = LockName::new("jobs/compact")?;
    let guard = locks
        .acquire_with(&name, &options)
        .await?
        .ok_or("timed out")?;
    let stopped = tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(5)) => false, // the job, too long
        () = guard.lost().cancelled() => true,
    };
    drop(guard);
    Ok(stopped)
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_target(false)
        .with_ansi(false)
        .without_time()
        .init();
    // Buckets turn the histograms into Prometheus histograms (for `histogram_quantile`).
    let buckets = [0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10.0];
    let metrics = PrometheusBuilder::new()
        .set_buckets(&buckets)?
        .install_recorder()?;
    distlock::telemetry::describe_metrics();
    let dir = tempfile_dir()?;
    let url = |label: &str| {
        format!(
            "sqlite://{}?owner_label={label}",
            dir.join("locks.db").display()
        )
    };
    let a = distlock::connect(&url("replica-a")).await?;
    let b = distlock::connect(&url("replica-b")).await?;

    let (ran_a, ran_b) = tokio::join!(replica(Arc::clone(&a), 6), replica(Arc::clone(&b), 6));
    let ((done_a, skipped_a), (done_b, skipped_b)) = (ran_a?, ran_b?);
    println!(
        "replica-a ran {done_a} jobs and skipped {skipped_a}; replica-b ran {done_b} and skipped {skipped_b}"
    );
    if !overrunning_job(&*a).await? {
        return Err("the overrunning job was not stopped at its max_hold".into());
    }
    println!("the overrunning job was stopped at its max_hold");

    let app = App {
        locks: Arc::clone(&a),
        metrics,
    };
    let router = Router::new()
        .route(
            "/metrics",
            get(|State(app): State<App>| async move { app.metrics.render() }),
        )
        .route("/locks/{*name}", get(lock_status))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let held = b.acquire("jobs/reindex").await?;
    print!(
        "GET /locks/jobs/reindex\n{}",
        http_get(addr, "/locks/jobs/reindex").await?
    );
    held.release().await?;
    print!(
        "GET /locks/jobs/reindex\n{}",
        http_get(addr, "/locks/jobs/reindex").await?
    );
    let exposition = http_get(addr, "/metrics").await?;
    println!("GET /metrics (distlock lines, histogram buckets left out)");
    let shown = |line: &&str| line.starts_with("distlock_lock_") && !line.contains("_bucket{");
    for line in exposition.lines().filter(shown) {
        println!("{line}");
    }
    server.abort();
    std::fs::remove_dir_all(&dir)?;
    let granted = done_a + done_b + 2;
    let expected =
        format!("distlock_lock_acquisitions{{backend=\"sqlite\",outcome=\"granted\"}} {granted}");
    if !exposition.contains(&expected) {
        return Err(format!("/metrics lacks `{expected}`").into());
    }
    Ok(())
}

fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("distlock-observed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A minimal HTTP/1.1 GET: the reply's body.
async fn http_get(addr: std::net::SocketAddr, path: &str) -> Result<String, Failure> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await?;
    let body = reply
        .split_once("\r\n\r\n")
        .map(|(_, body)| body)
        .unwrap_or_default();
    Ok(body.to_owned())
}
