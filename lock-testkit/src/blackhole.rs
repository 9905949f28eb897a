//! TCP endpoints that are not the server a client expects: one that accepts connections and
//! never answers (a server that hangs), one that answers in another protocol (HTTP).

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Accepts connections on a loopback port and holds them open in silence (after an optional
/// greeting in another protocol), so clients see a server that never answers them in their
/// protocol (the hardest case for timeouts). Stops when dropped.
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
        Self::answering(None).await
    }

    /// Like [`start`](Blackhole::start), but every connection first gets an HTTP `400 Bad
    /// Request` and is then held open: a port where something other than the expected server
    /// answers.
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
    pub async fn speaking_http() -> Self {
        Self::answering(Some(
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
        ))
        .await
    }

    async fn answering(greeting: Option<&'static [u8]>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|error| panic!("bind blackhole: {error}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|error| panic!("blackhole address: {error}"));
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut socket, _)) = listener.accept().await {
                if let Some(greeting) = greeting {
                    use tokio::io::AsyncWriteExt;
                    let _ = socket.write_all(greeting).await;
                }
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
