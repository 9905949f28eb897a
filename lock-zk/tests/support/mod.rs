//! What the ZooKeeper test binaries share: the server, a conformance target, node inspection.
#![allow(dead_code, unreachable_pub)] // each test binary uses a different part

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lock_core::ServiceBuilder;
use lock_core::{DistributedLock, LockName, Result, async_trait};
use lock_testkit::ConformanceTarget;
use lock_testkit::servers::{ZkServer, external_url, four_letter};
use lock_zk::ZkLock;

/// One standalone server per test binary, with `tick`; `None` (a loud skip) without ZooKeeper.
pub fn server_url(tick: Duration) -> Option<String> {
    shared_server_url(|| ZkServer::start_with_tick(tick))
}

/// As [`server_url`], with a server whose container reaper runs only once a minute: for a
/// binary that counts what its requests make the server do, which a reaper's transaction
/// between them would change.
pub fn rarely_reaped_server_url(tick: Duration) -> Option<String> {
    shared_server_url(|| ZkServer::start_rarely_reaped(tick))
}

/// The binary's one server, started by `start` on the first call: a binary asks for one kind of
/// server only, since a later call gets the server the first one started.
fn shared_server_url(
    start: impl FnOnce() -> Result<ZkServer, lock_testkit::ServerError>,
) -> Option<String> {
    static SERVER: OnceLock<Option<(String, Option<ZkServer>)>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            if let Some(url) = external_url("ZOOKEEPER") {
                return Some((url, None));
            }
            let server = lock_testkit::require(start())?;
            Some((server.url(), Some(server)))
        })
        .as_ref()
        .map(|(url, _)| url.clone())
}

/// A lock name no other test or run uses.
pub fn unique(case: &str) -> LockName {
    LockName::new(format!("lock-zk/{case}/{}", uuid::Uuid::new_v4())).expect("valid name")
}

/// Waits until `condition` holds, polling every 10 ms, or panics with `what` after `limit`.
pub async fn eventually(limit: Duration, what: &str, condition: impl Fn() -> bool) {
    let start = tokio::time::Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the async `condition` holds, polling every 20 ms, or panics after `limit`.
pub async fn eventually_async<F, Fut>(limit: Duration, what: &str, condition: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = tokio::time::Instant::now();
    while !condition().await {
        assert!(
            start.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The server's client port, when this binary spawned it (four-letter words need it).
pub fn server_port(url: &str) -> u16 {
    let hosts = url.trim_start_matches("zk://");
    let first = hosts.split([',', '/', '?']).next().unwrap_or_default();
    first
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .expect("URL has a port")
}

/// How many requests the server at `port` has received, from its `srvr` answer.
pub fn received(port: u16) -> u64 {
    four_letter_number(port, "srvr", "Received: ")
}

/// How many watches the server at `port` keeps, from its `wchs` answer.
pub fn watches(port: u16) -> u64 {
    four_letter_number(port, "wchs", "Total watches:")
}

/// The number after `label` in the server's answer to the four-letter word `command`.
fn four_letter_number(port: u16, command: &str, label: &str) -> u64 {
    let answer = four_letter(port, command).unwrap_or_else(|error| panic!("{command}: {error}"));
    answer
        .lines()
        .find_map(|line| line.strip_prefix(label))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {label:?} in {answer:?}"))
}

/// A service with its own session.
pub async fn connect(url: &str) -> ZkLock {
    ZkLock::builder(url)
        .connect()
        .await
        .expect("connect to ZooKeeper")
}

/// The lock nodes under `name`'s parent, lowest sequence first.
pub async fn lock_nodes(admin: &ZkLock, name: &LockName) -> Vec<String> {
    let client = admin.client().await.expect("admin client");
    let parent = admin.lock_path(name);
    let mut children = match client.list_children(&parent).await {
        Ok(children) => children,
        Err(lock_zk::zookeeper_client::Error::NoNode) => Vec::new(),
        Err(error) => panic!("list {parent}: {error}"),
    };
    children.retain(|child| child.contains("lock-"));
    children.sort_by_key(|child| child.rsplit_once("lock-").map(|(_, seq)| seq.to_owned()));
    children
        .into_iter()
        .map(|child| format!("{parent}/{child}"))
        .collect()
}

/// The conformance target: every client its own session; `sever` deletes the holder's node.
#[derive(Debug)]
pub struct ZkTarget {
    pub url: String,
}

impl ZkTarget {
    /// The target's URL with its hosts replaced by `addr`: the same credentials, path and
    /// parameters, so a client through a proxy is the same identity as the others.
    fn url_at(&self, addr: SocketAddr) -> String {
        let (scheme, rest) = self.url.split_once("://").expect("a URL with a scheme");
        let (credentials, hosts) = match rest.rsplit_once('@') {
            Some((credentials, hosts)) => (format!("{credentials}@"), hosts),
            None => (String::new(), rest),
        };
        let tail = hosts.find(['/', '?']).map_or("", |at| &hosts[at..]);
        format!("{scheme}://{credentials}{addr}{tail}")
    }
}

#[async_trait]
impl ConformanceTarget for ZkTarget {
    async fn client(&self) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(connect(&self.url).await))
    }

    async fn sever(&self, name: &LockName) -> Result<()> {
        let admin = connect(&self.url).await;
        let holder = lock_nodes(&admin, name).await;
        let holder = holder.first().expect("a holder node to sever");
        let client = admin.client().await?;
        client
            .delete(holder, None)
            .await
            .expect("delete the holder's node");
        Ok(())
    }

    async fn unreachable_client(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        let connected = ZkLock::builder(&self.url_at(addr))
            .connect_timeout(timeout)
            .operation_timeout(timeout)
            .connect()
            .await;
        Some(connected.map(|lock| Arc::new(lock) as Arc<dyn DistributedLock>))
    }

    /// The first host of the server's URL, resolved.
    fn server_addr(&self) -> Option<SocketAddr> {
        let (_, hosts) = self.url.split_once("://")?;
        let hosts = hosts.rsplit_once('@').map_or(hosts, |(_, hosts)| hosts);
        let first = hosts.split([',', '/', '?']).next()?;
        first.to_socket_addrs().ok()?.next()
    }

    /// A client through the proxy at `addr`: `timeout` bounds its connect and each request, and
    /// its session timeout is eight of them (4 s unscaled, the least a 2 s tick allows), so
    /// a stalled link ends the hold within a few seconds. Its holds are at risk once a third of
    /// the session timeout is left unconfirmed, well before the session is declared ended
    /// (half a session timeout after the client notices the silence, which takes 2/5 of it).
    async fn client_at(
        &self,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Option<Result<Arc<dyn DistributedLock>>> {
        let connected = ZkLock::builder(&self.url_at(addr))
            .connect_timeout(timeout)
            .operation_timeout(timeout)
            .session_timeout(timeout * 8)
            .connect()
            .await;
        Some(connected.map(|lock| Arc::new(lock) as Arc<dyn DistributedLock>))
    }

    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }

    async fn connect_url(&self, url: &str) -> Result<Arc<dyn DistributedLock>> {
        Ok(Arc::new(ZkLock::builder(url).connect().await?))
    }
}
