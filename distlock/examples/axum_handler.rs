//! An HTTP handler guarded by a lock: one report build at a time across every replica.
//!
//! ```text
//! cargo run -p distlock --features sqlite --example axum_handler
//! ```
//!
//! `POST /reports/nightly` builds the report under the lock and answers 200 with the fencing
//! token, or 409 at once while another request (on any replica) holds it. The example serves
//! on a loopback port, sends two requests at the same time, and checks it got one of each.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use distlock::{DistributedLock, DistributedLockExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn build_report(State(locks): State<Arc<dyn DistributedLock>>) -> (StatusCode, String) {
    let guard = match locks.try_acquire("reports/nightly").await {
        Ok(Some(guard)) => guard,
        Ok(None) => {
            return (
                StatusCode::CONFLICT,
                "a report build is already running\n".to_owned(),
            );
        }
        Err(error) => return (StatusCode::SERVICE_UNAVAILABLE, format!("{error}\n")),
    };
    let token = guard.fencing_token();
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(300)) => {} // the build
        () = guard.lost().cancelled() => return (StatusCode::SERVICE_UNAVAILABLE, "lost the lock\n".to_owned()),
    }
    match guard.release().await {
        Ok(()) => (
            StatusCode::OK,
            format!("report built under fencing token {token}\n"),
        ),
        Err(error) => (StatusCode::SERVICE_UNAVAILABLE, format!("{error}\n")),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("distlock-axum-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let locks = distlock::connect(&format!("sqlite://{}", dir.join("locks.db").display())).await?;
    let app = Router::new()
        .route("/reports/nightly", post(build_report))
        .with_state(locks);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let (first, second) = tokio::join!(post_report(addr), post_report(addr));
    let mut statuses = [first?, second?];
    statuses.sort_unstable();
    server.abort();
    std::fs::remove_dir_all(&dir)?;
    if statuses != [200, 409] {
        return Err(format!("expected one 200 and one 409, got {statuses:?}").into());
    }
    println!("two concurrent requests: one built the report (200), one was told it was busy (409)");
    Ok(())
}

/// A minimal HTTP/1.1 client: sends the POST, prints the reply, returns its status code.
async fn post_report(addr: std::net::SocketAddr) -> Result<u16, Box<dyn std::error::Error>> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let request = format!(
        "POST /reports/nightly HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await?;
    let status = reply
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or("no status line")?;
    println!("{}", reply.lines().next().unwrap_or_default());
    println!("{}", reply.lines().last().unwrap_or_default());
    Ok(status)
}
