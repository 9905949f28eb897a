//! The conformance suite on sessions with digest credentials and lock nodes only their creator
//! may touch (`acl=creator`), and what another identity may and may not do to them.

mod support;

use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLock, DistributedLockExt, ErrorKind};
use lock_testkit::ConformanceTarget;
use lock_zk::ZkLock;
use lock_zk::zookeeper_client::Error as ZkError;
use support::unique;

/// `user:password` sessions with `acl` on every node they create, under a root of their own.
fn url(user: &str, acl: &str) -> Option<String> {
    let plain = support::server_url(Duration::from_millis(2000))?;
    let hosts = plain.trim_start_matches("zk://");
    Some(format!(
        "zk://{user}:{user}-pw@{hosts}?acl={acl}&root=/distlock-digest-{acl}"
    ))
}

async fn digest() -> Option<Arc<dyn ConformanceTarget>> {
    let url = url("bob", "creator")?;
    Some(Arc::new(support::ZkTarget { url }))
}

lock_testkit::conformance_tests!(digest());

/// Another identity, and an anonymous session, can neither delete a held lock's node nor
/// force-release it; with `creator-read` the other identity can still inspect the hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_identity_cannot_take_or_delete_our_lock() {
    for acl in ["creator", "creator-read"] {
        let (Some(bob), Some(alice)) = (url("bob", acl), url("alice", acl)) else {
            return;
        };
        let owner = ZkLock::builder(&bob).connect().await.expect("bob");
        let other = ZkLock::builder(&alice).connect().await.expect("alice");
        let anonymous_url =
            bob.replacen("bob:bob-pw@", "", 1)
                .replacen(&format!("acl={acl}&"), "", 1);
        let anonymous = ZkLock::builder(&anonymous_url)
            .connect()
            .await
            .expect("anonymous");
        let name = unique(&format!("digest-{acl}"));
        let guard = owner.try_acquire(&name).await.expect("try").expect("free");
        let nodes = support::lock_nodes(&owner, &name).await;
        let node = nodes.first().expect("bob's lock node");

        for intruder in [&other, &anonymous] {
            let client = intruder.client().await.expect("client");
            let deleted = client.delete(node, None).await;
            assert!(
                matches!(deleted, Err(ZkError::NoAuth)),
                "{acl}: delete by another identity: {deleted:?}"
            );
            let forced = intruder.force_release(&name, guard.fencing_token()).await;
            let error = forced.expect_err("force_release by another identity");
            assert_eq!(error.kind(), ErrorKind::Backend, "{acl}: {error}");
            assert!(error.to_string().contains("refused"), "{error}");
        }
        let seen = other.inspect(&name).await;
        match acl {
            "creator-read" => assert!(
                !seen.expect("inspect with world read").holders.is_empty(),
                "alice cannot see bob's hold"
            ),
            _ => assert!(seen.is_err(), "alice read a creator-only lock: {seen:?}"),
        }
        assert_eq!(support::lock_nodes(&owner, &name).await, nodes, "{acl}");
        guard.release().await.expect("release");
    }
}
