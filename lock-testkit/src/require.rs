//! What happens when a server's binary is missing: a loud skip, or a failure under
//! `LOCK_TEST_REQUIRE=1`.

use std::fmt;

/// Why a test server could not be started.
#[derive(Debug)]
pub enum ServerError {
    /// A binary the server needs is not installed.
    Missing {
        /// The server kind.
        server: &'static str,
        /// What was looked for.
        binary: String,
    },
    /// The server was installed but did not start or become ready.
    Failed {
        /// The server kind.
        server: &'static str,
        /// What went wrong, with the log's tail.
        reason: String,
    },
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Missing { server, binary } => write!(
                f,
                "{server} is not installed ({binary} not found); run scripts/install-servers, \
                 or point LOCK_TEST_<BACKEND>_URL at a running server"
            ),
            ServerError::Failed { server, reason } => write!(f, "{server} did not start: {reason}"),
        }
    }
}

impl std::error::Error for ServerError {}

/// Whether `LOCK_TEST_REQUIRE=1`: missing servers fail tests instead of skipping them.
pub fn servers_required() -> bool {
    std::env::var("LOCK_TEST_REQUIRE")
        .is_ok_and(|value| value == "1" || value.eq_ignore_ascii_case("true"))
}

/// Turns a start result into `Some(server)`, or a loud skip (`None`) when the binary is missing
/// and servers are not required.
///
/// # Panics
///
/// When the server failed to start, or is missing while `LOCK_TEST_REQUIRE=1`.
pub fn require<T>(started: Result<T, ServerError>) -> Option<T> {
    match started {
        Ok(server) => Some(server),
        Err(error @ ServerError::Missing { .. }) if !servers_required() => {
            eprintln!("SKIPPED: {error} (set LOCK_TEST_REQUIRE=1 to make this a failure)");
            None
        }
        Err(error) => panic!("{error}"),
    }
}
