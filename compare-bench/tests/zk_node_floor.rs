//! The ZooKeeper node floor on a real ZooKeeper writes the node distlock writes for an
//! uncontended hold: an ephemeral sequential child named `_c_<uuid>-lock-<sequence>`, of the
//! same name length, carrying a label; its release deletes it.

use compare_bench::contend::Contender;
use compare_bench::peers::zk_node_floor::ZkNodeFloor;
use lock_core::{DistributedLockExt, LockName};
use lock_testkit::require;
use lock_testkit::servers::ZkServer;
use zookeeper_client::Client;

/// The only child of `parent`, with its stat's ephemeral owner and data length.
async fn only_child(client: &Client, parent: &str) -> (String, i64, i32) {
    let children = client.list_children(parent).await.expect("list");
    let [child] = children.as_slice() else {
        panic!("{parent} has children {children:?}, not one");
    };
    let (data, stat) = client
        .get_data(&format!("{parent}/{child}"))
        .await
        .expect("read the node");
    assert_eq!(data.len(), stat.data_length as usize);
    (child.clone(), stat.ephemeral_owner, stat.data_length)
}

/// `_c_`, a hyphenated uuid, `-lock-`, ten digits.
fn is_lock_node_name(name: &str) -> bool {
    let Some((prefix, sequence)) = name.rsplit_once("-lock-") else {
        return false;
    };
    let uuid = prefix.strip_prefix("_c_").unwrap_or_default();
    uuid.len() == 36
        && uuid.split('-').map(str::len).eq([8, 4, 4, 4, 12])
        && sequence.len() == 10
        && sequence.bytes().all(|b| b.is_ascii_digit())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_floor_writes_the_node_an_uncontended_distlock_hold_writes() {
    let Some(server) = require(ZkServer::start()) else {
        return;
    };
    let hosts = server.connect_string();
    let observer = Client::connector().connect(&hosts).await.expect("observer");

    let distlock = distlock::connect(&format!("{}/?root=/ours", server.url()))
        .await
        .expect("distlock");
    let name = LockName::new("node-floor").expect("name");
    let guard = distlock
        .try_acquire(&name)
        .await
        .expect("try")
        .expect("free");
    let parents = observer.list_children("/ours").await.expect("list /ours");
    let [parent] = parents.as_slice() else {
        panic!("/ours has {parents:?}");
    };
    let (ours, our_owner, our_data) = only_child(&observer, &format!("/ours/{parent}")).await;
    guard.release().await.expect("release distlock");

    let floor = ZkNodeFloor::connect(&hosts, "/floor/parent")
        .await
        .expect("floor");
    let held = floor.acquire().await.expect("floor acquire");
    let (theirs, their_owner, their_data) = only_child(&observer, "/floor/parent").await;
    assert!(
        is_lock_node_name(&ours) && is_lock_node_name(&theirs),
        "{ours} {theirs}"
    );
    assert_eq!(ours.len(), theirs.len());
    assert!(our_owner != 0 && their_owner != 0, "both are ephemeral");
    assert!(our_data > 0 && their_data > 0, "both carry a label");
    held.release().await.expect("floor release");
    let left = observer.list_children("/floor/parent").await.expect("list");
    assert!(left.is_empty(), "the release left {left:?}");
}
