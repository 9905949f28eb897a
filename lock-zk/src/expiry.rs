//! The session as a lease on the local clock: while the connection is down, the session is
//! declared ended once the ensemble may have expired it, whether or not this client hears so.
//!
//! The ensemble expires a session one session timeout after it last heard from the client. A
//! client cut off from the ensemble cannot learn of that expiry until it reconnects (and behind
//! a silent link it keeps reconnecting without ever getting an answer), so the holds of its
//! session would outlive their lease. The monitor below counts the session timeout itself,
//! from the latest moment the ensemble can have heard from us, and ends the session locally
//! when it runs out: every hold's lost signal fires, and the next acquire opens a new session.

use std::time::Duration;

use lock_core::CancellationToken;
use tokio::time::Instant;
use zookeeper_client::{Client, SessionInfo, SessionState, StateWatcher};

/// How long before the client notices a disconnection it may last have heard from the server.
/// The client declares a silent connection lost after 2/5 of the negotiated session timeout
/// (its default connection timeout, which this crate does not change), checked every 1/20 of
/// it; another 1/20 covers the delay before the monitor sees the change. A connection that
/// fails outright is noticed sooner, so this is an upper bound either way.
fn silence_before_notice(session_timeout: Duration) -> Duration {
    session_timeout / 2
}

/// When the ensemble may expire the session, for a disconnection noticed at `noticed`: one
/// session timeout after the earliest moment the last server response can have arrived.
pub(crate) fn lease_end(noticed: Instant, session_timeout: Duration) -> Instant {
    let last_heard = noticed
        .checked_sub(silence_before_notice(session_timeout))
        .unwrap_or(noticed);
    last_heard + session_timeout
}

/// Watches the session's state until it ends: fires `ended` on a terminal state, or when a
/// disconnection lasts until the lease end; a reconnection (the same session: the client never
/// switches sessions) cancels the count. Returns early when `dropped` fires.
pub(crate) async fn monitor(
    mut states: StateWatcher,
    session_timeout: Duration,
    ended: CancellationToken,
    dropped: CancellationToken,
    close: impl FnOnce(),
) {
    let mut expires = match states.state() {
        SessionState::Disconnected => Some(lease_end(Instant::now(), session_timeout)),
        state if state.is_terminated() => return ended.cancel(),
        _ => None,
    };
    loop {
        let timer = async {
            match expires {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = dropped.cancelled() => return,
            () = timer => {
                tracing::warn!(
                    ?session_timeout,
                    "ZooKeeper unreachable until the session may have expired; its locks are lost"
                );
                ended.cancel();
                return close();
            }
            state = states.changed() => match state {
                state if state.is_terminated() => {
                    tracing::warn!(?state, "ZooKeeper session ended; its locks are lost");
                    return ended.cancel();
                }
                SessionState::Disconnected => {
                    expires.get_or_insert_with(|| lease_end(Instant::now(), session_timeout));
                }
                _ => expires = None,
            },
        }
    }
}

/// Makes sure a session declared ended locally is ended on the server too, so its nodes (holds
/// whose guards already reported them lost, and queued acquisitions) cannot hold up other
/// clients if the ensemble did not expire it: connects a second client on the same session and
/// closes it, retrying until that succeeds or the session is known to be over.
pub(crate) async fn close_on_server(
    hosts: String,
    session: SessionInfo,
    session_timeout: Duration,
    connect_timeout: Duration,
    mut states: StateWatcher,
) {
    const RETRY: Duration = Duration::from_secs(1);
    loop {
        if states.peek_state().is_terminated() {
            return;
        }
        let twin = Client::connector()
            .with_session(session.clone())
            .with_session_timeout(session_timeout)
            .connect(&hosts);
        match tokio::time::timeout(connect_timeout, twin).await {
            // Dropping the twin closes the session on the server.
            Ok(Ok(twin)) => return drop(twin),
            Ok(Err(zookeeper_client::Error::SessionExpired)) => return,
            _ => {}
        }
        tokio::select! {
            () = tokio::time::sleep(RETRY) => {}
            _ = states.changed() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_ends_before_the_server_can_expire_the_session() {
        let timeout = Duration::from_millis(2000);
        let noticed = Instant::now() + Duration::from_secs(5);
        // The latest the last answer can precede the notice: the client's 2/5 silence limit
        // plus its 1/20 check interval.
        let last_heard = noticed - timeout * 9 / 20;
        assert!(lease_end(noticed, timeout) <= last_heard + timeout);
        assert!(lease_end(noticed, timeout) > noticed);
    }
}
