//! A [`FencedResource`] served over TCP on loopback, so that holder processes write to one
//! resource that judges (and timestamps) every write itself.
//!
//! Protocol, one line each way: the writer sends `W CLIENT TOKEN\n`, the server answers `1\n`
//! (accepted) or `0\n` (rejected: a higher token was seen before).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use super::fenced::FencedResource;

/// The TCP face of one [`FencedResource`]. Stops accepting and closes connections on drop.
#[derive(Debug)]
pub struct FenceServer {
    addr: SocketAddr,
    resource: Arc<FencedResource>,
    acceptor: tokio::task::JoinHandle<()>,
}

impl FenceServer {
    /// Serves a fresh resource on a free loopback port.
    ///
    /// # Panics
    ///
    /// If no loopback port can be bound.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future before it returns closes what it opened.
    ///
    /// # Errors
    ///
    /// None; panics as documented.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|error| panic!("bind fence server: {error}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|error| panic!("fence server address: {error}"));
        let resource = Arc::new(FencedResource::new());
        let served = Arc::clone(&resource);
        let acceptor = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((socket, _)) = listener.accept().await {
                connections.spawn(serve(socket, Arc::clone(&served)));
            }
        });
        Self {
            addr,
            resource,
            acceptor,
        }
    }

    /// Where writers connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The resource behind the server, with every write it judged.
    pub fn resource(&self) -> &FencedResource {
        &self.resource
    }
}

impl Drop for FenceServer {
    fn drop(&mut self) {
        // Aborting the acceptor drops its JoinSet, which aborts every connection task.
        self.acceptor.abort();
    }
}

async fn serve(socket: TcpStream, resource: Arc<FencedResource>) {
    let _ = socket.set_nodelay(true);
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut fields = line.split_whitespace();
        let parsed = match (fields.next(), fields.next(), fields.next()) {
            (Some("W"), Some(client), Some(token)) => client.parse().ok().zip(token.parse().ok()),
            _ => None,
        };
        let Some((client, token)) = parsed else {
            return;
        };
        let reply: &[u8] = if resource.write(client, token) {
            b"1\n"
        } else {
            b"0\n"
        };
        if write.write_all(reply).await.is_err() {
            return;
        }
    }
}

/// The writer's side: one connection, one write at a time.
#[derive(Debug)]
pub struct FenceClient {
    lines: tokio::io::Lines<BufReader<tokio::net::tcp::OwnedReadHalf>>,
    write: tokio::net::tcp::OwnedWriteHalf,
}

impl FenceClient {
    /// Connects to a [`FenceServer`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops the half-open connection.
    ///
    /// # Errors
    ///
    /// The connection's I/O error.
    pub async fn connect(addr: SocketAddr) -> std::io::Result<Self> {
        let socket = TcpStream::connect(addr).await?;
        socket.set_nodelay(true)?;
        let (read, write) = socket.into_split();
        Ok(Self {
            lines: BufReader::new(read).lines(),
            write,
        })
    }

    /// Writes with `token` as `client`; returns whether the resource accepted it.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: a dropped call may leave its reply unread, out of step with the next.
    ///
    /// # Errors
    ///
    /// The connection's I/O error, or `UnexpectedEof` when the server closed it.
    pub async fn write(&mut self, client: usize, token: u64) -> std::io::Result<bool> {
        self.write
            .write_all(format!("W {client} {token}\n").as_bytes())
            .await?;
        match self.lines.next_line().await? {
            Some(reply) => Ok(reply.trim() == "1"),
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }
}
