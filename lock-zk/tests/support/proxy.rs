//! A loopback TCP proxy that can cut every connection and refuse new ones: a network partition
//! between one client and the server, without touching the server.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// The proxy; its tasks stop when it is dropped.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    cut: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    links: Arc<Mutex<Vec<AbortHandle>>>,
    accept: AbortHandle,
}

impl Proxy {
    /// Forwards a fresh loopback port to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let cut = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let links: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let accept = {
            let (cut, links) = (Arc::clone(&cut), Arc::clone(&links));
            let accepted = Arc::clone(&accepted);
            tokio::spawn(async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    accepted.fetch_add(1, Ordering::SeqCst);
                    if cut.load(Ordering::SeqCst) {
                        continue; // dropped at once: the connection is refused in effect
                    }
                    let link = tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    let mut links = links.lock().unwrap_or_else(PoisonError::into_inner);
                    links.push(link.abort_handle());
                }
            })
            .abort_handle()
        };
        Self {
            addr,
            cut,
            accepted,
            links,
            accept,
        }
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many connections clients have opened to the proxy so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Drops every connection and refuses new ones until [`heal`](Proxy::heal).
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        let mut links = self.links.lock().unwrap_or_else(PoisonError::into_inner);
        for link in links.drain(..) {
            link.abort();
        }
    }

    /// Forwards new connections again.
    pub fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
