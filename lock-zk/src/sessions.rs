//! The service's session, reopened once its predecessor ended: one opening at a time, shared
//! by every caller that needs it, each waiting no longer than its own deadline.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use lock_core::backend::Deadline;
use lock_core::{Error, ErrorKind, Result};

use crate::errors::BACKEND;
use crate::session::Session;
use crate::settings::Settings;

/// An opening in flight; its failure is shared as `(kind, message)`.
type Opening = Shared<BoxFuture<'static, std::result::Result<Arc<Session>, (ErrorKind, String)>>>;

/// The current session, or the opening of the next one.
#[derive(Debug)]
pub(crate) struct Sessions {
    settings: Arc<Settings>,
    state: Mutex<State>,
}

enum State {
    Live(Arc<Session>),
    Opening(Opening),
    /// The last opening failed; the next caller tries again.
    Closed,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            State::Live(session) => f.debug_tuple("Live").field(session).finish(),
            State::Opening(_) => f.write_str("Opening"),
            State::Closed => f.write_str("Closed"),
        }
    }
}

impl Sessions {
    pub(crate) fn new(settings: Arc<Settings>, session: Arc<Session>) -> Self {
        Self {
            settings,
            state: Mutex::new(State::Live(session)),
        }
    }

    /// The live session: the current one, or a new one if it ended. Callers arriving while a
    /// session is being opened wait for that opening (and share its failure) instead of opening
    /// their own in turn; each waits at most until its `deadline`.
    pub(crate) async fn session(&self, deadline: Deadline) -> Result<Arc<Session>> {
        let opening = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            match &*state {
                State::Live(session) if !session.is_ended() => return Ok(Arc::clone(session)),
                State::Opening(opening) => opening.clone(),
                State::Live(_) | State::Closed => {
                    let settings = Arc::clone(&self.settings);
                    let opening = async move {
                        Session::open(settings)
                            .await
                            .map_err(|error| (error.kind(), error.to_string()))
                    }
                    .boxed()
                    .shared();
                    *state = State::Opening(opening.clone());
                    opening
                }
            }
        };
        let outcome = tokio::select! {
            outcome = opening.clone() => outcome,
            () = deadline.sleep() => {
                return Err(Error::new(
                    ErrorKind::Unavailable,
                    "the ZooKeeper session ended and no new one was established within the wait",
                )
                .with_backend(BACKEND));
            }
        };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let still_this_one = matches!(&*state, State::Opening(current) if current.ptr_eq(&opening));
        match outcome {
            Ok(session) => {
                if still_this_one {
                    *state = State::Live(Arc::clone(&session));
                }
                Ok(session)
            }
            Err((kind, message)) => {
                if still_this_one {
                    *state = State::Closed;
                }
                Err(Error::new(kind, message).with_backend(BACKEND))
            }
        }
    }
}
