//! Read-write locks and semaphores hand over promptly on every dialect: a claim waiting on
//! another service (as another process would) notices a release within a few milliseconds
//! even after a long wait, where a plain polling backoff would have grown to half a second.

use std::time::Duration;

use lock_core::{Claim, RwLockExt};
use lock_testkit::scaled_ms;
use tokio::time::Instant;

use super::line::service;
use super::{SqlTarget, unique};

/// How many handoffs the case times.
const HANDOFFS: usize = 4;

pub(crate) async fn a_waiting_writer_notices_the_release_promptly(target: &SqlTarget) {
    let (reading, writing) = (service(target).await, service(target).await);
    let mut slowest = Duration::ZERO;
    for handoff in 0..HANDOFFS {
        let name = unique("claims/handoff");
        let reader = reading
            .acquire_rw_timeout(&name, Claim::Read, scaled_ms(5000))
            .await
            .expect("read hold");
        let writer = {
            let (writing, name) = (writing.clone(), name.clone());
            tokio::spawn(async move {
                let granted = writing
                    .acquire_rw_timeout(&name, Claim::Write, scaled_ms(10_000))
                    .await;
                (granted, Instant::now())
            })
        };
        // Long enough for a doubling backoff to reach its 500 ms ceiling.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let released = Instant::now();
        reader.release().await.expect("release");
        let (granted, at) = writer.await.expect("writer task");
        granted
            .unwrap_or_else(|error| panic!("handoff {handoff}: write hold: {error}"))
            .release()
            .await
            .expect("release");
        slowest = slowest.max(at.saturating_duration_since(released));
    }
    assert!(
        slowest < scaled_ms(150),
        "a waiting writer took {slowest:?} to notice a release ({:?})",
        target.dialect
    );
}
