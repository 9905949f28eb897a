//! Converting Redis client errors into distlock errors at the crate boundary.

use std::time::Duration;

use lock_core::{Error, ErrorKind};
use redis::RedisError;

/// The backend name errors carry.
pub(crate) const BACKEND: &str = "redis";

/// Classifies a Redis client error: connection trouble is [`ErrorKind::Unavailable`] (try again
/// later), anything the server answered is [`ErrorKind::Backend`].
pub(crate) fn from_redis(error: RedisError, server: &str) -> Error {
    let (kind, message) = match error.kind() {
        redis::ErrorKind::AuthenticationFailed => (
            ErrorKind::Backend,
            format!(
                "Redis at {server} refused the credentials: check the user and password in the \
                 URL and the user's ACL rules"
            ),
        ),
        redis::ErrorKind::Server(redis::ServerErrorKind::NoPerm) => (
            ErrorKind::Backend,
            format!(
                "the Redis user at {server} lacks a permission the lock needs ({}): grant the \
                 commands, keys and channels of lock-redis's minimal ACL",
                error.detail().unwrap_or("NOPERM")
            ),
        ),
        redis::ErrorKind::Parse => (
            ErrorKind::Unavailable,
            format!(
                "the server at {server} does not speak the Redis protocol: check the host and \
                 port (and rediss:// for a TLS port)"
            ),
        ),
        _ if error.is_io_error()
            || error.is_timeout()
            || error.is_connection_refusal()
            || error.is_connection_dropped()
            || error.is_unrecoverable_error() =>
        {
            (
                ErrorKind::Unavailable,
                format!("cannot reach Redis at {server}"),
            )
        }
        _ => (
            ErrorKind::Backend,
            format!("Redis at {server} answered with an error"),
        ),
    };
    Error::new(kind, message)
        .with_backend(BACKEND)
        .with_server(server)
        .with_source(error)
}

/// The error for a server that did not answer within `timeout`.
pub(crate) fn timed_out(server: &str, timeout: Duration) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        format!("Redis at {server} did not answer within {timeout:?}; the connection is replaced"),
    )
    .with_backend(BACKEND)
    .with_server(server)
}

/// The error for a reply of an unexpected shape (a script or server that is not ours).
pub(crate) fn unexpected_reply(server: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::Backend,
        format!("Redis at {server} sent an unexpected reply to {what}"),
    )
    .with_backend(BACKEND)
    .with_server(server)
}
