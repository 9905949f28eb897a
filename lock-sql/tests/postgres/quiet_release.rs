//! A lock nobody waits for is taken and released without a word to anyone: no notification
//! reaches the listeners of other services (PostgreSQL 15 signals every connection listening
//! on a channel of the database, whatever it waits for), and no waiter entry is read or
//! written. A release that finds a waiter in line still tells it (`handoff`).

use std::time::Duration;

use lock_core::DistributedLockExt;
use sqlx::postgres::PgListener;

use lock_sql::SqlLock;

use crate::release_choice::sent_since;
use crate::support::{SqlTarget, unique};

/// Uncontended pairs the case makes.
const PAIRS: usize = 20;

fn target() -> Option<SqlTarget> {
    crate::url().map(SqlTarget::plain)
}

/// A bystander listens on the lock table's channel, as every service's listener does, while
/// a service takes and releases a free lock [`PAIRS`] times: it hears nothing, and each
/// release is the one cheap statement. The table is the case's own: other cases' releases
/// of contended locks notify the shared table's channel.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uncontended_pairs_notify_no_listener() {
    let Some(target) = target() else { return };
    let table = format!("quiet_{:08x}", rand::random::<u32>());
    let holder = SqlLock::builder(&target.url).table(&table).connect();
    let holder = holder.await.expect("connect");
    let mut bystander = PgListener::connect(&target.url).await.expect("listener");
    bystander.listen(&table).await.expect("listen");
    let name = unique("quiet/pairs");
    let before = holder.release_statements().expect("counted");
    for _ in 0..PAIRS {
        let guard = holder.try_acquire(&name).await.expect("try").expect("free");
        guard.release().await.expect("release");
    }
    assert_eq!(sent_since(&holder, before), [PAIRS as u64, 0]);
    let mut heard = 0;
    // Notifications are sent at commit, before each release returns: what was sent has
    // arrived well within this.
    while let Ok(notification) =
        tokio::time::timeout(Duration::from_millis(500), bystander.recv()).await
    {
        notification.expect("listening");
        heard += 1;
    }
    assert_eq!(heard, 0, "{PAIRS} uncontended pairs notified a bystander");
}
