//! `connect` is cancel safe: dropping it mid-way closes the connection it was opening, and
//! invalid input fails before any I/O.

use lock_core::ServiceBuilder;
use std::time::Duration;

use lock_core::ErrorKind;
use lock_testkit::scaled_ms;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_connect_closes_the_half_open_connection() {
    // A server that accepts and never answers, and reports when the client hangs up.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let url = format!("redis://{addr}");
    let connecting = tokio::spawn(async move {
        lock_redis::RedisLock::builder(&url)
            .connect()
            .await
            .map(drop)
    });
    let (mut socket, _) = tokio::time::timeout(scaled_ms(5000), listener.accept())
        .await
        .expect("the client never connected")
        .expect("accept");
    connecting.abort();
    let mut buffer = [0u8; 1024];
    let closed = tokio::time::timeout(scaled_ms(3000), async {
        loop {
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the dropped connect kept its connection open"
    );
}

#[tokio::test]
async fn invalid_urls_and_options_fail_before_any_io() {
    for url in [
        "http://127.0.0.1:6379",
        "redis://[not-an-address",
        "",
        "redis://127.0.0.1:1,ftp://x",
    ] {
        let error = lock_redis::RedisLock::builder(url)
            .connect()
            .await
            .map(drop)
            .expect_err(url);
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{url}: {error}");
    }
    let error = lock_redis::RedisLock::builder("redis://127.0.0.1:1")
        .operation_timeout(Duration::ZERO)
        .connect()
        .await
        .map(drop)
        .expect_err("zero timeout accepted");
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
}
