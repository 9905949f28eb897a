//! Herd freedom against a real ZooKeeper: with 32 waiters, each release wakes one waiter.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lock_core::DistributedLockExt;
use lock_testkit::scaled_ms;
use lock_testkit::servers::four_letter;
use lock_zk::ZkLock;
use support::{eventually, unique};
use tokio::sync::Semaphore;

const WAITERS: usize = 32;

/// Watched paths under `prefix` and how many sessions watch each, from the server's `wchp`.
fn watchers_under(port: u16, prefix: &str) -> BTreeMap<String, usize> {
    let answer = four_letter(port, "wchp").expect("wchp");
    let mut watched = BTreeMap::new();
    let mut current = None;
    for line in answer.lines() {
        if line.starts_with(char::is_whitespace) {
            if let Some(path) = &current {
                *watched.entry(String::clone(path)).or_insert(0) += 1;
            }
        } else {
            current = line.starts_with(prefix).then(|| line.trim().to_owned());
        }
    }
    watched
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_release_wakes_one_of_32_waiters() {
    let Some(url) = support::server_url(Duration::from_millis(2000)) else {
        return;
    };
    let port = support::server_port(&url);
    let name = unique("herd");
    let holder = support::connect(&url).await;
    let parent = holder.lock_path(&name);
    let guard = holder
        .acquire_timeout(&name, scaled_ms(5000))
        .await
        .expect("acquire");
    let gate = Arc::new(Semaphore::new(0));
    let granted = Arc::new(AtomicUsize::new(0));
    let mut waiters: Vec<Arc<ZkLock>> = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..WAITERS {
        let waiter = Arc::new(support::connect(&url).await);
        waiters.push(Arc::clone(&waiter));
        let (name, gate, granted) = (name.clone(), Arc::clone(&gate), Arc::clone(&granted));
        tasks.push(tokio::spawn(async move {
            let guard = waiter.acquire_timeout(&name, scaled_ms(60_000)).await;
            let guard = guard.expect("waiter acquire");
            granted.fetch_add(1, Ordering::SeqCst);
            gate.acquire().await.expect("gate").forget();
            guard.release().await.expect("waiter release");
        }));
    }
    let wakeups = || waiters.iter().map(|w| w.predecessor_wakeups()).sum::<u64>();
    // Every waiter watches its predecessor; the holder keeps no watch (its renewals read its
    // node).
    eventually(scaled_ms(20_000), "32 watches on lock nodes", || {
        watchers_under(port, &format!("{parent}/"))
            .values()
            .sum::<usize>()
            == WAITERS
    })
    .await;
    let watched = watchers_under(port, &parent);
    assert!(
        !watched.contains_key(&parent),
        "someone watches the lock parent: {watched:?}"
    );
    let busiest = watched.values().max().copied().unwrap_or_default();
    assert!(
        busiest <= 1,
        "one lock node has {busiest} watchers (a herd): {watched:?}"
    );
    assert_eq!(wakeups(), 0, "waiters woke before any release");

    guard.release().await.expect("holder release");
    eventually(scaled_ms(5000), "the first waiter's grant", || {
        granted.load(Ordering::SeqCst) == 1
    })
    .await;
    tokio::time::sleep(scaled_ms(500)).await;
    assert_eq!(
        granted.load(Ordering::SeqCst),
        1,
        "one release granted two waiters"
    );
    assert_eq!(wakeups(), 1, "one release woke {} waiters", wakeups());

    gate.add_permits(WAITERS);
    for task in tasks {
        task.await.expect("waiter task");
    }
    assert_eq!(
        wakeups(),
        WAITERS as u64,
        "{WAITERS} releases in a chain woke waiters {} times",
        wakeups()
    );
}
