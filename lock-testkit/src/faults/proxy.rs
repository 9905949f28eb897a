//! A TCP fault proxy between a client and a server: latency, blackholes, lost replies and
//! connection resets, in user space (kernel `netem` is not available everywhere).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// What the proxy does to traffic; changing it affects open connections at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Forward both ways unchanged.
    Pass,
    /// Forward both ways, each chunk held back by this long.
    Latency(Duration),
    /// Accept and read, forward nothing either way: a partitioned link.
    Blackhole,
    /// Forward requests to the server but discard its replies.
    DropReplies,
}

/// A proxy on a free loopback port that forwards to `upstream` and injects [`Fault`]s.
/// Stops, closing every connection, when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    fault: watch::Sender<Fault>,
    connections: Arc<Mutex<JoinSet<()>>>,
    acceptor: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    /// Starts a proxy in [`Fault::Pass`] mode.
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
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|error| panic!("bind proxy: {error}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|error| panic!("proxy address: {error}"));
        let (fault, watcher) = watch::channel(Fault::Pass);
        let connections = Arc::new(Mutex::new(JoinSet::new()));
        let tracked = Arc::clone(&connections);
        let acceptor = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let watcher = watcher.clone();
                tracked
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .spawn(relay(client, upstream, watcher));
            }
        });
        Self {
            addr,
            fault,
            connections,
            acceptor,
        }
    }

    /// The address clients connect to instead of the server.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Switches every connection, open and future, to `fault`.
    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }

    /// Closes every open connection abruptly (both sides see a reset); new ones are accepted.
    pub fn reset_connections(&self) {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .abort_all();
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.acceptor.abort();
        self.reset_connections();
    }
}

/// Relays one connection until either side closes or the task is aborted.
async fn relay(client: TcpStream, upstream: SocketAddr, fault: watch::Receiver<Fault>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    // Abort drops the sockets; zero linger turns that close into a reset.
    let _ = client.set_zero_linger();
    let _ = server.set_zero_linger();
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::select! {
        () = pump(client_read, server_write, fault.clone(), Direction::Request) => {}
        () = pump(server_read, client_write, fault, Direction::Reply) => {}
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Request,
    Reply,
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    fault: watch::Receiver<Fault>,
    direction: Direction,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let current = *fault.borrow();
        let forward = match current {
            Fault::Pass => true,
            Fault::Latency(delay) => {
                tokio::time::sleep(delay).await;
                true
            }
            Fault::Blackhole => false,
            Fault::DropReplies => direction == Direction::Request,
        };
        if forward && to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}
