//! Conversion of ZooKeeper client errors into distlock errors, and request time limits.

use std::future::Future;
use std::time::Duration;

use lock_core::{Error, ErrorKind, Result};
use zookeeper_client as zk;

/// The backend name in error context.
pub(crate) const BACKEND: &str = "zookeeper";

/// The pause before asking again after a lost connection, so a flapping link cannot spin.
pub(crate) const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// Converts a client error from `operation`: no connection or no session is `Unavailable`,
/// everything else `Backend`.
pub(crate) fn convert(error: zk::Error, operation: &'static str) -> Error {
    let (kind, message) = match &error {
        zk::Error::ConnectionLoss
        | zk::Error::Custom(_)
        | zk::Error::Timeout
        | zk::Error::NoHosts
        | zk::Error::SessionExpired
        | zk::Error::SessionMoved
        | zk::Error::ClientClosed => (
            ErrorKind::Unavailable,
            "no ZooKeeper session: the ensemble is unreachable or the session ended",
        ),
        zk::Error::NoAuth | zk::Error::AuthFailed | zk::Error::InvalidAcl => (
            ErrorKind::Backend,
            "ZooKeeper refused the request: check the digest credentials and the acl option",
        ),
        _ => (ErrorKind::Backend, "ZooKeeper request failed"),
    };
    Error::new(kind, message)
        .with_backend(BACKEND)
        .with_operation(operation)
        .with_source(error)
}

/// Whether a request failed because the connection broke, so it may or may not have been
/// applied. The client reports a broken connection as `ConnectionLoss`, or as the I/O error
/// itself (`Custom`) for requests in flight when the socket failed.
pub(crate) fn is_connection_loss(error: &zk::Error) -> bool {
    matches!(error, zk::Error::ConnectionLoss | zk::Error::Custom(_))
}

/// Runs one request with a time limit: `Err` is `Unavailable` (too slow) or the converted error
/// of an unexpected kind; the inner result keeps the errors the caller handles itself.
pub(crate) async fn within<T>(
    limit: Duration,
    operation: &'static str,
    request: impl Future<Output = Result<T, zk::Error>>,
) -> Result<Result<T, zk::Error>> {
    match lock_core::backend::timeout(limit, request).await {
        Ok(result) => Ok(result),
        Err(_) => Err(Error::new(
            ErrorKind::Unavailable,
            format!("ZooKeeper did not answer within {limit:?}"),
        )
        .with_backend(BACKEND)
        .with_operation(operation)),
    }
}
