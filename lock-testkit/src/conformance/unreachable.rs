//! An unreachable server fails with `Unavailable` within the configured timeout, never a hang.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use lock_core::{DistributedLockExt, ErrorKind};
use tokio::time::Instant;

use super::support::unique_name;
use crate::servers::PortReservation;
use crate::{Blackhole, ConformanceTarget, scaled_ms};

/// A refused port, a server that accepts but never answers, and one that answers in another
/// protocol (HTTP) all give `Unavailable`, within twice the configured timeout (connect, then
/// one request) plus slack.
///
/// # Cancel safety
///
/// Not cancel safe: dropped mid-case, it may leave its own uniquely named lock held until the
/// lease (or session) ends; other cases are unaffected.
///
/// # Errors
///
/// None: a failed check panics with what went wrong, as a test does.
pub async fn unreachable_server_is_unavailable_in_time(target: Arc<dyn ConformanceTarget>) {
    let timeout = Duration::from_millis(1000);
    let blackhole = Blackhole::start().await;
    let http = Blackhole::speaking_http().await;
    // A reserved port nothing listens on: connections are refused.
    let reservation = PortReservation::new().unwrap_or_else(|error| panic!("{error}"));
    let refused = SocketAddr::from((Ipv4Addr::LOCALHOST, reservation.port()));
    for (what, addr) in [
        ("refused port", refused),
        ("silent server", blackhole.addr()),
        ("HTTP server", http.addr()),
    ] {
        let started = Instant::now();
        let outcome = match target.unreachable_client(addr, timeout).await {
            None => {
                eprintln!("SKIPPED unreachable_server: the backend has no server");
                return;
            }
            Some(Err(error)) => Err(error),
            Some(Ok(lock)) => lock
                .acquire_timeout(unique_name("unreachable"), scaled_ms(60_000))
                .await
                .map(drop),
        };
        let elapsed = started.elapsed();
        let error = outcome.expect_err("acquire on an unreachable server succeeded");
        assert_eq!(error.kind(), ErrorKind::Unavailable, "{what}: {error}");
        assert!(
            elapsed <= timeout * 2 + scaled_ms(1500),
            "{what}: Unavailable after {elapsed:?}, timeout {timeout:?}"
        );
    }
}
