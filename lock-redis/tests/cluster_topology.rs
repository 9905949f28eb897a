//! What a Redis Cluster adds to one master: waiters subscribe on the shard that owns the
//! lock's slot (sharded pub/sub, nothing on the other masters), and a slot migrating while
//! 16 clients contend for a lock in it grants no overlap, keeps every client moving, and keeps
//! the queue's order (the grants out of arrival order are counted and bounded).

mod support;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use lock_core::{DistributedLockExt, LockName};
use lock_redis::RedisLock;
use lock_testkit::servers::RedisCluster;
use lock_testkit::{OverlapDetector, require};

/// One cluster (three primaries, a replica each) for this binary; the migration test moves
/// slots, so it gets a cluster of its own.
fn cluster() -> Option<&'static Mutex<RedisCluster>> {
    static CLUSTER: OnceLock<Option<Mutex<RedisCluster>>> = OnceLock::new();
    CLUSTER
        .get_or_init(|| require(RedisCluster::start(3, 1)).map(Mutex::new))
        .as_ref()
}

fn locked(cluster: &Mutex<RedisCluster>) -> std::sync::MutexGuard<'_, RedisCluster> {
    cluster
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The slot of `key`, as the cluster computes it.
fn slot_of(cluster: &RedisCluster, key: &str) -> u16 {
    let reply = cluster.nodes()[0]
        .command(&format!("CLUSTER KEYSLOT {key}"))
        .expect("CLUSTER KEYSLOT");
    reply
        .trim()
        .trim_start_matches(':')
        .parse()
        .expect("a slot number")
}

/// `PUBSUB SHARDCHANNELS pattern` (or `CHANNELS`) on one node: how many channels matching
/// `pattern` have a subscriber there.
fn channels(cluster: &RedisCluster, node: usize, command: &str, pattern: &str) -> u64 {
    let reply = cluster.nodes()[node]
        .command(&format!("PUBSUB {command} {pattern}"))
        .expect("PUBSUB");
    // `*N\r\n$LEN\r\nCHANNEL\r\n...`
    reply
        .lines()
        .next()
        .and_then(|line| line.trim().strip_prefix('*'))
        .and_then(|count| count.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_subscribe_on_the_shard_that_owns_the_slot() {
    let Some(cluster) = cluster() else { return };
    let url = locked(cluster).url();
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let name = LockName::new("cluster/sharded-wake").expect("name");
    let (key, _, channel) = lock.keys_for(&name);
    // Each waiter listens on a channel of its own under the lock's: `CHANNEL:TOKEN`.
    let waiters = format!("{channel}:*");
    let holder = lock.acquire(&name).await.expect("acquire");
    let waiter = {
        let (lock, name) = (lock.clone(), name.clone());
        tokio::spawn(async move { lock.acquire_timeout(&name, Duration::from_secs(30)).await })
    };
    let owner = {
        let cluster = locked(cluster);
        let slot = slot_of(&cluster, &key);
        cluster
            .primary_of_slot(slot)
            .expect("the slot has a master")
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while channels(&locked(cluster), owner, "SHARDCHANNELS", &waiters) == 0 {
        assert!(
            Instant::now() < deadline,
            "no sharded subscription on the owner"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    {
        let cluster = locked(cluster);
        for node in 0..cluster.nodes().len() {
            let plain = channels(&cluster, node, "CHANNELS", &waiters);
            assert_eq!(plain, 0, "node {node} has a plain subscription");
        }
    }
    let released = Instant::now();
    holder.release().await.expect("release");
    let guard = waiter.await.expect("task").expect("the waiter acquires");
    // A pushed wake-up, not the fallback timer (a third of the 6 s waiter ttl).
    assert!(
        released.elapsed() < Duration::from_millis(1000),
        "woken after {:?}",
        released.elapsed()
    );
    guard.release().await.expect("release");
}

/// Who waits since when, to count grants that skip an earlier waiter.
#[derive(Default)]
struct Arrivals {
    waiting: Vec<Option<Instant>>,
    out_of_order: u64,
}

impl Arrivals {
    fn wait(&mut self, client: usize) {
        self.waiting[client] = Some(Instant::now());
    }

    /// `client` got the lock: out of order if another waited since well before it asked
    /// (10 ms covers two clients whose requests cross on the way to the server).
    fn granted(&mut self, client: usize) {
        let mine = self.waiting[client].take();
        let earliest = self.waiting.iter().flatten().min().copied();
        if let (Some(mine), Some(earliest)) = (mine, earliest) {
            if earliest + Duration::from_millis(10) < mine {
                self.out_of_order += 1;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_migrating_under_16_contending_clients_grants_no_overlap() {
    const CLIENTS: usize = 16;
    let Some(cluster) = cluster() else { return };
    let url = locked(cluster).url();
    let name = LockName::new("cluster/migrating").expect("name");
    let detector = Arc::new(OverlapDetector::new());
    let arrivals = Arc::new(Mutex::new(Arrivals {
        waiting: vec![None; CLIENTS],
        out_of_order: 0,
    }));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut clients = Vec::new();
    for id in 0..CLIENTS {
        let lock = RedisLock::builder(&url).connect().await.expect("connect");
        let (name, detector, arrivals, stop) = (
            name.clone(),
            Arc::clone(&detector),
            Arc::clone(&arrivals),
            Arc::clone(&stop),
        );
        clients.push(tokio::spawn(async move {
            let mut grants = 0_u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                arrivals.lock().expect("arrivals").wait(id);
                let guard = lock
                    .acquire_timeout(&name, Duration::from_secs(30))
                    .await
                    .map_err(|error| format!("client {id}: {error}"))?;
                arrivals.lock().expect("arrivals").granted(id);
                detector.enter(id, guard.fencing_token());
                tokio::time::sleep(Duration::from_millis(rand::random_range(1..3))).await;
                detector.leave();
                guard
                    .release()
                    .await
                    .map_err(|error| format!("client {id}: {error}"))?;
                grants += 1;
            }
            Ok::<u64, String>(grants)
        }));
    }
    let lock = RedisLock::builder(&url).connect().await.expect("connect");
    let (key, _, _) = lock.keys_for(&name);
    let (slot, home, away) = {
        let cluster = locked(cluster);
        let slot = slot_of(&cluster, &key);
        let home = cluster.primary_of_slot(slot).expect("owner");
        let away = (0..cluster.nodes().len())
            .find(|&node| node != home && cluster.replica_of(node).is_some())
            .expect("another primary");
        (slot, home, away)
    };
    let mut keys_moved = Vec::new();
    for (from, to) in [(home, away), (away, home)] {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let moved =
            tokio::task::spawn_blocking(move || locked(cluster).migrate_slot(slot, from, to));
        keys_moved.push(moved.await.expect("task").expect("the slot migrates"));
    }
    // The lock's fence counter at least moves each time (its key never expires).
    assert!(
        keys_moved.iter().all(|&moved| moved > 0),
        "no key moved: {keys_moved:?}"
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut total = 0;
    for (id, client) in clients.into_iter().enumerate() {
        let grants = client.await.expect("task").expect("no acquisition fails");
        assert!(grants > 0, "client {id} never got the lock");
        total += grants;
    }
    assert_eq!(detector.overlaps(), 0, "overlapping grants among {total}");
    let tokens = detector.tokens();
    assert!(
        tokens.windows(2).all(|pair| pair[0] < pair[1]),
        "fencing tokens fell"
    );
    let out_of_order = arrivals.lock().expect("arrivals").out_of_order;
    eprintln!(
        "{total} grants over two migrations (keys moved: {keys_moved:?}), {out_of_order} out of \
         arrival order"
    );
    assert!(
        out_of_order * 20 <= total,
        "{out_of_order} of {total} grants skipped an earlier waiter"
    );
}
