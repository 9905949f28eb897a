//! The fault proxy does what each fault says.

use std::time::Duration;

use lock_testkit::faults::{Fault, FaultProxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An echo server on loopback: the simplest upstream to watch the proxy's effect on.
async fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind echo");
    let addr = listener.local_addr().expect("echo address");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 1024];
                while let Ok(read) = socket.read(&mut buffer).await {
                    if read == 0 || socket.write_all(&buffer[..read]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Sends `ping` and waits up to `wait` for the echo; `None` on silence, `Some(Err)` on reset.
async fn round_trip(stream: &mut TcpStream, wait: Duration) -> Option<std::io::Result<Duration>> {
    let started = tokio::time::Instant::now();
    if let Err(error) = stream.write_all(b"ping").await {
        return Some(Err(error));
    }
    let mut reply = [0u8; 4];
    match tokio::time::timeout(wait, stream.read_exact(&mut reply)).await {
        Ok(Ok(_)) => Some(Ok(started.elapsed())),
        Ok(Err(error)) => Some(Err(error)),
        Err(_) => None,
    }
}

#[tokio::test]
async fn proxy_passes_delays_blackholes_drops_replies_and_resets() {
    let proxy = FaultProxy::start(echo_server().await).await;
    let mut stream = TcpStream::connect(proxy.addr())
        .await
        .expect("connect through proxy");
    let wait = Duration::from_millis(500);
    assert!(
        matches!(round_trip(&mut stream, wait).await, Some(Ok(_))),
        "pass mode did not echo"
    );

    proxy.set(Fault::Latency(Duration::from_millis(100)));
    let delayed = round_trip(&mut stream, wait)
        .await
        .expect("latency mode went silent")
        .expect("echo");
    assert!(
        delayed >= Duration::from_millis(200),
        "two 100 ms hops took only {delayed:?}"
    );

    proxy.set(Fault::Blackhole);
    assert!(
        round_trip(&mut stream, wait).await.is_none(),
        "blackhole answered"
    );
    proxy.set(Fault::DropReplies);
    assert!(
        round_trip(&mut stream, wait).await.is_none(),
        "drop-replies answered"
    );

    proxy.set(Fault::Pass);
    let mut fresh = TcpStream::connect(proxy.addr())
        .await
        .expect("connect again");
    assert!(
        matches!(round_trip(&mut fresh, wait).await, Some(Ok(_))),
        "pass mode after faults did not echo"
    );
    proxy.reset_connections();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let after_reset = round_trip(&mut fresh, wait).await;
    assert!(
        matches!(after_reset, Some(Err(_))),
        "connection survived a reset: {after_reset:?}"
    );
}
