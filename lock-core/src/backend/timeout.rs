//! Time limits on requests in flight, kept by one thread per process: a request costs an
//! entry in an ordered table under a short lock, not a timer of its own.
//!
//! `tokio::time::timeout` registers a timer with the runtime's time driver for every request
//! and takes it out again, under the driver's lock, which the thread parked in the driver
//! shares; when the new deadline comes before the one that thread sleeps for, it is woken to
//! sleep again. On a lock request that takes a round trip of a couple hundred microseconds,
//! that was about 6 µs of client CPU for an uncontended acquire and release. Here every
//! deadline goes into one table; the keeper thread sleeps until the first and is woken only
//! when a new deadline comes before it, which for requests of one limit happens at most once
//! per limit. The keeper ends a request by waking its task, whose next poll finds its entry
//! gone. It serves every runtime alike, so a request's limit holds whichever runtime polls it
//! and whichever runtimes have ended.

use std::collections::BTreeMap;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

/// A request outlived its time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request outlived its time limit")
    }
}

impl std::error::Error for Elapsed {}

/// Runs `request`, ending it once `limit` has passed since this call, as
/// `tokio::time::timeout` does, but without a timer of its own (see the module's text). A
/// limit too long to add to the clock (`Duration::MAX`) sets none. The limit is kept in real
/// time: a paused tokio clock does not stop it.
///
/// # Cancel safety
///
/// As cancel safe as `request`: dropped, it takes its deadline out and drops `request`.
///
/// # Errors
///
/// [`Elapsed`] when `limit` passed before `request` completed; `request` is dropped then.
pub async fn timeout<F: Future>(limit: Duration, request: F) -> Result<F::Output, Elapsed> {
    let Some(deadline) = Instant::now().checked_add(limit) else {
        return Ok(request.await);
    };
    let Some(keeper) = Keeper::started() else {
        // No thread to keep the limits: a timer of its own, then.
        return tokio::time::timeout(limit, request)
            .await
            .map_err(|_| Elapsed);
    };
    let mut request = pin!(request);
    let mut entry = Entry {
        keeper,
        deadline,
        id: None,
    };
    poll_fn(|cx| {
        if let Poll::Ready(output) = request.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        if entry.waits(cx.waker()) {
            Poll::Pending
        } else {
            Poll::Ready(Err(Elapsed))
        }
    })
    .await
}

/// How many times a new deadline woke the keeper thread, and how many deadlines are in the
/// table: what tests of the keeper's cost look at.
#[doc(hidden)]
#[must_use]
pub fn timeout_keeper_stats() -> (u64, usize) {
    let table = KEEPER.table();
    (table.woken, table.pending.len())
}

static KEEPER: Keeper = Keeper {
    table: Mutex::new(Table {
        pending: BTreeMap::new(),
        next_id: 0,
        armed: None,
        woken: 0,
    }),
    wake: Condvar::new(),
};

struct Keeper {
    table: Mutex<Table>,
    /// Wakes the thread: a deadline before the one it sleeps for.
    wake: Condvar,
}

struct Table {
    /// The wakers of the requests in flight, by deadline and then arrival.
    pending: BTreeMap<(Instant, u64), Waker>,
    next_id: u64,
    /// What the thread sleeps until, no later than the first deadline; `None` while it waits
    /// only to be woken.
    armed: Option<Instant>,
    woken: u64,
}

/// A request's place in the table, taken out when the request ends or is dropped.
struct Entry {
    keeper: &'static Keeper,
    deadline: Instant,
    /// Its key's second half, once the request first waited.
    id: Option<u64>,
}

impl Entry {
    /// The request waits on `waker`: records it; `false` once the deadline has passed.
    fn waits(&mut self, waker: &Waker) -> bool {
        let mut table = self.keeper.table();
        let Some(id) = self.id else {
            if self.deadline <= Instant::now() {
                return false;
            }
            let id = table.next_id;
            table.next_id += 1;
            table.pending.insert((self.deadline, id), waker.clone());
            self.id = Some(id);
            if table.armed.is_none_or(|armed| self.deadline < armed) {
                table.armed = Some(self.deadline);
                table.woken += 1;
                self.keeper.wake.notify_one();
            }
            return true;
        };
        match table.pending.get_mut(&(self.deadline, id)) {
            Some(slot) => {
                if !slot.will_wake(waker) {
                    slot.clone_from(waker);
                }
                true
            }
            // The keeper took it out: the deadline passed.
            None => false,
        }
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.keeper.table().pending.remove(&(self.deadline, id));
        }
    }
}

impl Keeper {
    /// The keeper, its thread started on first use; `None` if the thread could not start.
    fn started() -> Option<&'static Keeper> {
        static STARTED: OnceLock<bool> = OnceLock::new();
        let started = STARTED.get_or_init(|| {
            std::thread::Builder::new()
                .name("distlock-timeouts".into())
                .spawn(|| KEEPER.run())
                .is_ok()
        });
        started.then_some(&KEEPER)
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The thread: wakes every request whose deadline passed, then sleeps until the next
    /// deadline or until a new one comes before it.
    fn run(&self) {
        let mut table = self.table();
        loop {
            let now = Instant::now();
            let later = table.pending.split_off(&(now, u64::MAX));
            let due = std::mem::replace(&mut table.pending, later);
            // With nothing in flight, the thread keeps sleeping until the time it was set
            // for, which later deadlines need no wake-up to follow.
            let first = table.pending.first_key_value().map(|(&(at, _), _)| at);
            table.armed = first.or(table.armed.filter(|&at| at > now));
            if !due.is_empty() {
                drop(table);
                for waker in due.into_values() {
                    // A waker that panics ends no one's limit but its own.
                    let _ = catch_unwind(AssertUnwindSafe(|| waker.wake()));
                }
                table = self.table();
                continue;
            }
            table = match table.armed {
                Some(at) => {
                    let (table, _) = (self.wake)
                        .wait_timeout(table, at.saturating_duration_since(now))
                        .unwrap_or_else(PoisonError::into_inner);
                    table
                }
                None => self
                    .wake
                    .wait(table)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}
