//! One classified error type for every backend.
//!
//! Backends keep their own private error enums and convert at their boundary into [`Error`],
//! choosing the [`ErrorKind`] that tells the caller what to do next.

use std::error::Error as StdError;
use std::fmt;

/// A `Result` whose error is distlock's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure happened: the part of an [`Error`] callers branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The lock stayed held elsewhere for the whole wait.
    Timeout,
    /// The backend no longer vouches for a hold this process had.
    Lost,
    /// The caller asked to release or extend a hold it does not have (any more).
    NotHeld,
    /// The server could not be reached, or did not answer within the configured timeout.
    Unavailable,
    /// A name, URL or option is invalid; nothing was sent to any server.
    InvalidInput,
    /// The backend cannot do what was asked (for example, extending a ZooKeeper hold).
    Unsupported,
    /// The server answered with an error that fits no other kind.
    Backend,
}

impl ErrorKind {
    /// A short lower-case name, as printed in messages.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Lost => "lost",
            ErrorKind::NotHeld => "not held",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::InvalidInput => "invalid input",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Backend => "backend error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A distlock error: a kind, a message, where it happened, and the underlying cause.
///
/// One pointer wide: the details live on the heap, so `Result`s stay small on the hot path.
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: ErrorKind,
    message: String,
    backend: Option<&'static str>,
    server: Option<String>,
    operation: Option<&'static str>,
    lock: Option<String>,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl Error {
    /// An error of `kind` with a message that says what went wrong and, where it can, what to fix.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                backend: None,
                server: None,
                operation: None,
                lock: None,
                source: None,
            }),
        }
    }

    /// Shorthand for an [`ErrorKind::InvalidInput`] error.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Records which backend raised the error (`"redis"`, `"zookeeper"`, ...).
    #[must_use]
    pub fn with_backend(mut self, backend: &'static str) -> Self {
        self.inner.backend = Some(backend);
        self
    }

    /// Records which server the error is about, as a URL with its password hidden (see
    /// [`redact`](crate::url::redact)).
    #[must_use]
    pub fn with_server(mut self, server: impl Into<String>) -> Self {
        self.inner.server = Some(server.into());
        self
    }

    /// Fills in whichever of backend, operation and lock the error does not record yet: the
    /// innermost context, set where the error arose, wins.
    #[must_use]
    pub fn context(
        mut self,
        backend: &'static str,
        operation: &'static str,
        lock: impl fmt::Display,
    ) -> Self {
        self.inner.backend.get_or_insert(backend);
        self.inner.operation.get_or_insert(operation);
        if self.inner.lock.is_none() {
            self.inner.lock = Some(lock.to_string());
        }
        self
    }

    /// Records the operation that failed (`"acquire"`, `"release"`, `"renew"`, ...).
    #[must_use]
    pub fn with_operation(mut self, operation: &'static str) -> Self {
        self.inner.operation = Some(operation);
        self
    }

    /// Records the lock name the operation was about.
    #[must_use]
    pub fn with_lock(mut self, lock: impl fmt::Display) -> Self {
        self.inner.lock = Some(lock.to_string());
        self
    }

    /// Attaches the underlying cause.
    #[must_use]
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// Attaches an already boxed underlying cause.
    #[must_use]
    pub fn with_boxed_source(mut self, source: Box<dyn StdError + Send + Sync + 'static>) -> Self {
        self.inner.source = Some(source);
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The message, without context.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The backend that raised the error, if recorded.
    pub fn backend(&self) -> Option<&'static str> {
        self.inner.backend
    }

    /// The server the error is about (URL without password), if recorded.
    pub fn server(&self) -> Option<&str> {
        self.inner.server.as_deref()
    }

    /// The operation that failed, if recorded.
    pub fn operation(&self) -> Option<&'static str> {
        self.inner.operation
    }

    /// The lock name the error is about, if recorded.
    pub fn lock(&self) -> Option<&str> {
        self.inner.lock.as_deref()
    }

    /// Whether trying the same operation again later may succeed
    /// (timeouts and unreachable servers), as opposed to failures that will repeat.
    pub fn is_temporary(&self) -> bool {
        matches!(self.inner.kind, ErrorKind::Timeout | ErrorKind::Unavailable)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.inner.kind, self.inner.message)?;
        let context = [
            ("backend", self.inner.backend),
            ("server", self.inner.server.as_deref()),
            ("operation", self.inner.operation),
            ("lock", self.inner.lock.as_deref()),
        ];
        let mut first = true;
        for (label, value) in context {
            if let Some(value) = value {
                f.write_str(if first { " (" } else { ", " })?;
                write!(f, "{label}: {value:?}")?;
                first = false;
            }
        }
        if !first {
            f.write_str(")")?;
        }
        if let Some(source) = &self.inner.source {
            write!(f, ": {source}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("message", &self.inner.message)
            .field("backend", &self.inner.backend)
            .field("server", &self.inner.server)
            .field("operation", &self.inner.operation)
            .field("lock", &self.inner.lock)
            .field("source", &self.inner.source)
            .finish()
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|source| source as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_includes_context_and_source() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let error = Error::new(ErrorKind::Unavailable, "cannot connect to 127.0.0.1:1")
            .with_backend("redis")
            .with_operation("acquire")
            .with_lock("jobs/nightly")
            .with_source(io);
        assert_eq!(
            error.to_string(),
            "unavailable: cannot connect to 127.0.0.1:1 (backend: \"redis\", operation: \"acquire\", lock: \"jobs/nightly\"): refused"
        );
        assert!(error.is_temporary());
        assert!(StdError::source(&error).is_some());
    }

    #[test]
    fn context_fills_only_what_is_missing() {
        let error = Error::new(ErrorKind::Unavailable, "x")
            .with_operation("connect")
            .context("redis", "acquire", "a")
            .context("zookeeper", "release", "b");
        assert_eq!(error.backend(), Some("redis"));
        assert_eq!(error.operation(), Some("connect"));
        assert_eq!(error.lock(), Some("a"));
    }

    #[test]
    fn only_timeouts_and_unavailability_are_temporary() {
        assert!(Error::new(ErrorKind::Timeout, "x").is_temporary());
        assert!(!Error::new(ErrorKind::Lost, "x").is_temporary());
        assert!(!Error::invalid_input("x").is_temporary());
    }
}
