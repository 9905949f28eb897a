//! The ZooKeeper recipe floor on a real ZooKeeper waits as a queue recipe does: a client whose
//! node is not the lowest watches the node ahead of its own and holds once every node ahead
//! is gone, in the order the nodes were created.

use std::sync::Arc;
use std::time::Duration;

use compare_bench::contend::{Contender, Held};
use compare_bench::peers::zk_recipe_floor::ZkRecipeFloor;
use lock_testkit::require;
use lock_testkit::servers::ZkServer;

/// Starts `client`'s acquire in a task; its result says whether it was granted.
fn acquiring(
    client: &Arc<ZkRecipeFloor>,
) -> tokio::task::JoinHandle<Result<Box<dyn Held>, String>> {
    let client = Arc::clone(client);
    tokio::spawn(async move { client.acquire().await.map_err(|error| error.to_string()) })
}

/// Waits until `parent` has `count` children.
async fn queue_of(hosts: &str, parent: &str, count: usize) {
    let client = zookeeper_client::Client::connector()
        .connect(hosts)
        .await
        .expect("connect");
    for _ in 0..100 {
        let children = client.list_children(parent).await.expect("list");
        if children.len() == count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the queue never reached {count} nodes");
}

/// The held lock of a finished acquire, within 5 s.
async fn granted(task: tokio::task::JoinHandle<Result<Box<dyn Held>, String>>) -> Box<dyn Held> {
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("not granted within 5 s of the release")
        .expect("the waiting task")
        .expect("the waiting acquire")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_floor_clients_are_granted_in_creation_order() {
    let Some(server) = require(ZkServer::start()) else {
        return;
    };
    let hosts = server.connect_string();
    let parent = "/recipe-floor-test/queue";
    let client = async || {
        Arc::new(
            ZkRecipeFloor::connect(&hosts, parent)
                .await
                .expect("client"),
        )
    };
    let (first, second, third) = (client().await, client().await, client().await);
    let held = first.acquire().await.expect("uncontended grant");
    let waiting = acquiring(&second);
    queue_of(&hosts, parent, 2).await;
    let behind = acquiring(&third);
    queue_of(&hosts, parent, 3).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !waiting.is_finished() && !behind.is_finished(),
        "an acquire ended while the first client held"
    );

    held.release().await.expect("release");
    let next = granted(waiting).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !behind.is_finished(),
        "the last in line was granted while the one ahead of it held"
    );
    next.release().await.expect("second release");
    let last = granted(behind).await;
    last.release().await.expect("third release");
    queue_of(&hosts, parent, 0).await;
}
