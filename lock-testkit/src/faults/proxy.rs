//! A TCP fault proxy between a client and a server: latency, blackholes, lost replies and
//! connection resets, in user space (kernel `netem` is not available everywhere).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// Forward replies to the client but discard its requests: a one-way partition in which
    /// the client still hears the server but cannot be heard.
    DropRequests,
}

/// A proxy on a free loopback port that forwards to `upstream` and injects [`Fault`]s.
/// Stops, closing every connection, when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    fault: watch::Sender<Fault>,
    /// Connections numbered below this hold every byte they read (see
    /// [`stall_open_connections`](FaultProxy::stall_open_connections)).
    stalled_below: watch::Sender<u64>,
    opened: Arc<AtomicU64>,
    /// While set, new connections are closed at once (refused, in effect).
    refusing: Arc<AtomicBool>,
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
        let (stalled_below, stall_watcher) = watch::channel(0);
        let opened = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(Mutex::new(JoinSet::new()));
        let tracked = Arc::clone(&connections);
        let numbering = Arc::clone(&opened);
        let refusing = Arc::new(AtomicBool::new(false));
        let refuse = Arc::clone(&refusing);
        let acceptor = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if refuse.load(Ordering::SeqCst) {
                    numbering.fetch_add(1, Ordering::SeqCst);
                    continue; // dropped at once
                }
                let faults = Faults {
                    fault: watcher.clone(),
                    stalled_below: stall_watcher.clone(),
                    number: numbering.fetch_add(1, Ordering::SeqCst),
                };
                tracked
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .spawn(relay(client, upstream, faults));
            }
        });
        Self {
            addr,
            fault,
            stalled_below,
            opened,
            refusing,
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

    /// Stalls every connection open now, as a pulled cable or a frozen host would: they stay
    /// open, and every byte they carry from now on is held (never forwarded, never dropped),
    /// so neither side hears anything. Connections opened later pass (the client reconnecting
    /// over a route that works).
    pub fn stall_open_connections(&self) {
        self.stalled_below
            .send_replace(self.opened.load(Ordering::SeqCst));
    }

    /// Cuts the link: closes every open connection and refuses new ones until
    /// [`heal`](FaultProxy::heal).
    pub fn cut(&self) {
        self.refusing.store(true, Ordering::SeqCst);
        self.reset_connections();
    }

    /// Accepts new connections again after [`cut`](FaultProxy::cut).
    pub fn heal(&self) {
        self.refusing.store(false, Ordering::SeqCst);
    }

    /// How many connections clients have opened to the proxy so far (refused ones included).
    pub fn accepted(&self) -> u64 {
        self.opened.load(Ordering::SeqCst)
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

/// The faults one connection obeys.
#[derive(Clone)]
struct Faults {
    fault: watch::Receiver<Fault>,
    stalled_below: watch::Receiver<u64>,
    number: u64,
}

impl Faults {
    /// Waits for as long as this connection is stalled.
    async fn hold_while_stalled(&mut self) {
        let number = self.number;
        let _closed = self.stalled_below.wait_for(|below| number >= *below).await;
    }
}

/// Relays one connection until either side closes or the task is aborted.
async fn relay(client: TcpStream, upstream: SocketAddr, faults: Faults) {
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
        () = pump(client_read, server_write, faults.clone(), Direction::Request) => {}
        () = pump(server_read, client_write, faults, Direction::Reply) => {}
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
    mut faults: Faults,
    direction: Direction,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        faults.hold_while_stalled().await;
        let current = *faults.fault.borrow();
        let forward = match current {
            Fault::Pass => true,
            Fault::Latency(delay) => {
                tokio::time::sleep(delay).await;
                true
            }
            Fault::Blackhole => false,
            Fault::DropReplies => direction == Direction::Request,
            Fault::DropRequests => direction == Direction::Reply,
        };
        if forward && to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}
