//! A TCP endpoint that accepts connections and never answers: a server that hangs.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Accepts connections on a loopback port and holds them open in silence, so clients see a
/// server that never answers (the hardest case for timeouts). Stops when dropped.
#[derive(Debug)]
pub struct Blackhole {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Blackhole {
    /// Starts listening on a free loopback port.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future before it returns closes the listener.
    ///
    /// # Errors
    ///
    /// None; panics as documented.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|error| panic!("bind blackhole: {error}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|error| panic!("blackhole address: {error}"));
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        Self { addr, task }
    }

    /// The address to point a client at.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Blackhole {
    fn drop(&mut self) {
        self.task.abort();
    }
}
