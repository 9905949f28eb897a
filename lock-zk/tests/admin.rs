//! What operators see and do on ZooKeeper beyond the conformance suite: the owner label in the
//! lock node's data, nodes Curator made, and lock parents no lock name maps to.

mod support;

use std::time::Duration;

use lock_core::{AcquireOptions, DistributedLock, DistributedLockExt, LockName};
use lock_testkit::scaled_ms;
use lock_zk::ZkLock;
use lock_zk::zookeeper_client::{Acls, CreateMode, Stat};
use support::unique;

fn server() -> Option<String> {
    support::server_url(Duration::from_millis(2000))
}

/// Creates a Curator-style lock node (`_c_<uuid>-lock-<seq>`, ephemeral sequential) holding
/// `data` under `name`'s parent, on `creator`'s session; returns its path and stat.
async fn curator_node(creator: &ZkLock, name: &LockName, data: &[u8]) -> (String, Stat) {
    curator_node_at(creator, &creator.lock_path(name), data).await
}

/// The same under the parent at `parent`, which no lock name need map to.
async fn curator_node_at(creator: &ZkLock, parent: &str, data: &[u8]) -> (String, Stat) {
    let client = creator.client().await.expect("client");
    let parents = CreateMode::Container.with_acls(Acls::anyone_all());
    client.mkdir(parent, &parents).await.expect("parent");
    let mode = CreateMode::EphemeralSequential.with_acls(Acls::anyone_all());
    let prefix = format!("{parent}/_c_{}-lock-", uuid::Uuid::new_v4());
    let (stat, sequence) = client.create(&prefix, data, &mode).await.expect("create");
    (format!("{prefix}{sequence}"), stat)
}

/// The node's data is the owner label, written by the create; `inspect` reads it back with
/// the grant's token and the node's creation time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_lock_node_carries_the_owner_label() {
    let Some(url) = server() else { return };
    let (holder, observer) = (support::connect(&url).await, support::connect(&url).await);
    let name = unique("label");
    let options = AcquireOptions::builder()
        .wait(scaled_ms(5000))
        .owner_label("billing-worker-3 (eu-west)")
        .build()
        .expect("options");
    let before = std::time::SystemTime::now() - Duration::from_secs(60);
    let guard = holder.acquire_with(&name, &options).await.expect("acquire");
    let guard = guard.expect("acquire timed out");
    let nodes = support::lock_nodes(&observer, &name).await;
    let client = observer.client().await.expect("client");
    let (data, _) = client.get_data(&nodes[0]).await.expect("node data");
    assert_eq!(data, b"billing-worker-3 (eu-west)");
    let status = observer.inspect(&name).await.expect("inspect");
    assert_eq!(status.holders.len(), 1, "{status:?}");
    let shown = &status.holders[0];
    assert_eq!(shown.owner_label, "billing-worker-3 (eu-west)");
    assert_eq!(shown.fencing_token, guard.fencing_token());
    assert_eq!(
        shown.lease_left, None,
        "a session, not a lease, keeps the node"
    );
    let granted = shown.granted_at.expect("granted_at from the node's ctime");
    assert!(granted > before, "{granted:?}");
    guard.release().await.expect("release");
}

/// A Curator holder shows its data as its label (or a placeholder when it is not printable),
/// its creation zxid as its token, and `force_release` with that token deletes its node.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn curator_holders_are_inspected_and_force_released() {
    let Some(url) = server() else { return };
    let (curator, operator) = (support::connect(&url).await, support::connect(&url).await);
    let name = unique("curator-holder");
    let (path, stat) = curator_node(&curator, &name, b"10.1.2.3").await;
    let (_, binary) = curator_node(&curator, &name, &[0xff, 0x00]).await;
    let status = operator.inspect(&name).await.expect("inspect");
    assert_eq!(status.waiters, 1, "{status:?}");
    let token = u64::try_from(stat.czxid).expect("positive zxid");
    assert_eq!(status.holders[0].owner_label, "10.1.2.3");
    assert_eq!(status.holders[0].fencing_token, token);
    assert!(
        !operator
            .force_release(&name, token + 1)
            .await
            .expect("force")
    );
    assert!(operator.force_release(&name, token).await.expect("force"));
    let client = operator.client().await.expect("client");
    assert_eq!(client.check_stat(&path).await.expect("stat"), None);
    let status = operator.inspect(&name).await.expect("inspect");
    assert_eq!(status.holders[0].owner_label, "curator", "{status:?}");
    assert_eq!(status.waiters, 0, "{status:?}");
    let next = u64::try_from(binary.czxid).expect("positive zxid");
    assert_eq!(status.holders[0].fencing_token, next);
    assert!(operator.force_release(&name, next).await.expect("force"));
    assert!(operator.inspect(&name).await.expect("inspect").is_idle());
}

/// `list` skips children of the root that no lock name maps to, and lock parents without a
/// lock node.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn list_skips_foreign_parents_and_empty_ones() {
    let Some(url) = server() else { return };
    let lock = support::connect(&url).await;
    let prefix = format!("lock-zk/list-{}/", uuid::Uuid::new_v4().simple());
    let held = LockName::new(format!("{prefix}held")).expect("name");
    let empty = LockName::new(format!("{prefix}empty")).expect("name");
    let guard = lock.acquire(&held).await.expect("acquire");
    let client = lock.client().await.expect("client");
    let parents = CreateMode::Persistent.with_acls(Acls::anyone_all());
    client
        .mkdir(&lock.lock_path(&empty), &parents)
        .await
        .expect("empty parent");
    // Lower-case escapes: not a name this crate makes, though it decodes to one under prefix.
    let foreign = lock.lock_path(&held).replace("%2F", "%2f") + "x";
    curator_node_at(&lock, &foreign, b"10.1.2.3").await;
    assert_eq!(lock.list(&prefix).await.expect("list"), vec![held.clone()]);
    guard.release().await.expect("release");
    assert!(lock.list(&prefix).await.expect("list").is_empty());
    client
        .delete(&lock.lock_path(&empty), None)
        .await
        .expect("delete the empty parent");
}
