//! The SQL backend's steps: one statement per try on a pooled connection, woken (or, on
//! PostgreSQL, granted the lock) by PostgreSQL's `NOTIFY`, on MySQL by the release interrupting
//! a connection the waiter parks, and otherwise by this service's own releases and by reading
//! their place in line at the [`Pace`] of the line.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lock_core::backend::{Busy, Deadline, Grant, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, LockName, Result, async_trait};
use tokio::time::Instant;

use crate::db::{Attempt, Bell, Conn, Owner, PARK_AT_MOST, Waiting, Woken};
use crate::held::SqlHeld;
use crate::lock::Inner;
use crate::pace::Pace;
use crate::waiting::WaitEntry;
use crate::wakeups::Waiter;

mod attempt;

use attempt::within_lease;

/// The longest a PostgreSQL waiter sleeps between tries while notifications flow: a safety
/// net for a notification lost in a reconnect.
const NOTIFIED_FALLBACK: Duration = Duration::from_secs(5);

/// A service's steps, shared by its clones.
#[derive(Debug)]
pub(crate) struct SqlSteps {
    pub(crate) inner: Arc<Inner>,
    /// Acquire statements sent, for tests that count what a release sets off.
    pub(crate) tries: AtomicU64,
}

/// One acquisition: the name, the lease and label, its wake-up subscription (made before the
/// first try, so a release in between is not missed), its waiter entry and polling pace, its
/// owner token (fixed for the acquisition: a PostgreSQL release may grant the lock to it, on
/// the terms the entry carries), and the connection of the statement in flight (a cleanup
/// releases by the owner on that connection, after the statement).
#[derive(Debug)]
pub(crate) struct SqlAttempt {
    name: LockName,
    lease: Duration,
    label: Arc<str>,
    waiter: Waiter,
    entry: WaitEntry,
    pace: Pace,
    owner: Owner,
    conn: Option<Conn>,
    /// A release is still due: a cleanup took the connection but could not release on it or
    /// on another yet, or the entry left the line after a release may have granted it.
    release_owed: bool,
    /// When the last try that found the lock held was sent (at first, when the acquisition
    /// began): a release that grants this acquisition the lock runs after it, so the lease
    /// runs from no earlier than then.
    busy_sent: Instant,
    /// The fence of a grant a release made and announced.
    handed: Option<u64>,
    /// The connection the acquisition parks while it waits (MySQL), which a release
    /// interrupts when this acquisition is first in line; `None` where none is parked.
    bell: Option<Bell>,
    /// The id of the parked connection the placed entry names, if any.
    named: Option<u64>,
    /// How the last park ended, until the next try.
    woken: Option<Woken>,
    /// When the holder's lease ends, as the last try that found the lock held read it.
    lease_ends: Option<Instant>,
    /// Whether opening a connection to park failed or was refused: the acquisition reads
    /// the line from then on, rather than try again at every wait.
    unparked: bool,
}

#[async_trait]
impl LockSteps for SqlSteps {
    type Attempt = SqlAttempt;

    fn backend(&self) -> &'static str {
        self.inner.settings.dialect.backend()
    }

    fn server(&self) -> &str {
        &self.inner.settings.server
    }

    fn leases(&self) -> &Leases {
        &self.inner.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> SqlAttempt {
        SqlAttempt {
            name: name.clone(),
            lease: options.lease,
            label: Arc::clone(&options.owner_label),
            waiter: self.inner.wakeups.subscribe(),
            entry: WaitEntry::new(options.wait, self.inner.wakeups.entry_id()),
            pace: Pace::default(),
            owner: Owner::random(),
            conn: None,
            release_owed: false,
            busy_sent: Instant::now(),
            handed: None,
            bell: None,
            named: None,
            woken: None,
            lease_ends: None,
            unparked: false,
        }
    }

    /// One acquire statement; when it finds the lock held and the acquisition will wait, the
    /// waiter entry is placed or refreshed with it (see [`crate::db::Db::acquire`]), and when
    /// it grants an acquisition that waited, the entry is removed (by the statement itself, or
    /// by another on the same connection).
    async fn try_once(&self, attempt: &mut SqlAttempt) -> Result<Try> {
        let inner = &self.inner;
        if let Some(fence) = attempt.handed.take() {
            // The release that granted it removed the entry in the same statement.
            attempt.entry.removed();
            let held = SqlHeld {
                inner: Arc::clone(inner),
                name: attempt.name.clone(),
                owner: attempt.owner,
            };
            return Ok(Try::Granted(Grant::new(
                fence,
                Arc::new(held),
                attempt.busy_sent,
            )));
        }
        let woken = attempt.woken.take();
        if woken == Some(Woken::SleptOut) && attempt.parks_on(Instant::now()) {
            // The park's own check found it was not this acquisition's turn, and no release
            // rang since: park again.
            return Ok(Try::Busy(attempt.parked()));
        }
        inner.ensure_schema().await?;
        let conn = inner.db.connection().await;
        let conn = attempt
            .conn
            .insert(conn.map_err(|error| inner.error(error, "acquire"))?);
        let name = attempt.name.as_str();
        let sent = Instant::now();
        // Place or refresh the entry with this try, should it find the lock held.
        let (was_placed, place) = (attempt.entry.placed(), attempt.entry.due(sent));
        if place {
            attempt.entry.sending();
            if attempt.bell.is_none() && !attempt.unparked {
                // The entry names the connection it will park, if one is idle; else the
                // first park opens one and names it then.
                attempt.bell = inner.db.idle_bell();
            }
        }
        let waiting = Waiting {
            id: attempt.entry.id,
            place,
            placed: was_placed,
            sleeper: attempt.bell.as_ref().map(Bell::id),
            turn: matches!(woken, Some(Woken::Turn | Woken::Rung)),
        };
        self.tries.fetch_add(1, Ordering::Relaxed);
        let outcome = inner
            .db
            .acquire(
                conn,
                name,
                attempt.owner,
                attempt.lease,
                &attempt.label,
                waiting,
            )
            .await
            .map_err(|error| inner.error(error, "acquire"))?;
        let busy = match outcome {
            Attempt::Granted(fence) | Attempt::Handed(fence) => {
                let mut settled = true;
                if !was_placed || inner.db.acquire_keeps_entry() {
                    // No entry was placed before, and a try that grants places none; or the
                    // grant removed it.
                    attempt.entry.removed();
                } else {
                    // A failure leaves an entry that expires by itself; the grant stands.
                    match inner.db.leave_granted(conn, name, attempt.entry.id).await {
                        Ok(()) => attempt.entry.removed(),
                        Err(error) => {
                            settled = false;
                            tracing::debug!(%error, "removing the waiter entry failed");
                        }
                    }
                }
                if let Some(conn) = attempt.conn.take().filter(|_| settled) {
                    inner.db.reuse(conn);
                }
                let held = SqlHeld {
                    inner: Arc::clone(inner),
                    name: attempt.name.clone(),
                    owner: attempt.owner,
                };
                let lease_from = match outcome {
                    Attempt::Handed(_) => attempt.busy_sent,
                    _ => sent,
                };
                return Ok(Try::Granted(Grant::new(fence, Arc::new(held), lease_from)));
            }
            Attempt::Contended => {
                // Rolled back by the server: the pool checks the connection before lending it.
                attempt.conn = None;
                Busy::polled()
            }
            Attempt::Queued { ahead, remaining } => {
                attempt.waiting(place, waiting.sleeper, sent, remaining);
                match self.parks(attempt).await {
                    true => attempt.parked(),
                    false => {
                        within_lease(Busy::polled().within(attempt.pace.next(ahead)), remaining)
                    }
                }
            }
            Attempt::Held(remaining) => {
                attempt.waiting(place, waiting.sleeper, sent, remaining);
                let pushed = inner.wakeups.server_side();
                if !pushed && self.parks(attempt).await {
                    attempt.parked()
                } else {
                    let busy = Busy {
                        recheck_within: pushed.then_some(NOTIFIED_FALLBACK),
                        pushed,
                    };
                    // Where nobody wakes waiters, an entry just placed reads its place at
                    // once, and the pace takes over from there; a backoff wait would let the
                    // line move on without it.
                    let busy = match pushed || was_placed || !place {
                        true => busy,
                        false => busy.within(Duration::ZERO),
                    };
                    within_lease(busy, remaining)
                }
            }
        };
        // Not granted: a release that grants this acquisition later runs after this try.
        attempt.busy_sent = sent;
        // Settled: nothing is left to release, and the connection is ready for the next
        // statement.
        if let Some(conn) = attempt.conn.take() {
            inner.db.reuse(conn);
        }
        // Try again in time to refresh the waiter entry.
        Ok(Try::Busy(
            match attempt.entry.refresh_within(Instant::now()) {
                Some(within) => busy.within(within),
                None => busy,
            },
        ))
    }

    /// Waits for a release of the name that wakes everyone, or wakes this acquisition as the
    /// first in line, or grants it the lock (the next try then holds it without a statement).
    /// An acquisition that parks a connection (MySQL) waits on it instead: until a release
    /// interrupts it, its check finds the turn came, or it slept until `until`.
    async fn wait(&self, attempt: &mut SqlAttempt, until: Deadline) {
        let sleep = until.instant().map_or(PARK_AT_MOST, |at| {
            at.saturating_duration_since(Instant::now())
        });
        // A time the server cannot wait (a fraction of a second, on MySQL) is waited here.
        let placed = attempt.entry.placed();
        let mut until = until;
        if let Some(bell) = attempt
            .bell
            .as_mut()
            .filter(|b| placed && b.parks_for(sleep))
        {
            let name_it = attempt.named != Some(bell.id());
            let (name, entry) = (attempt.name.as_str(), attempt.entry.id);
            match bell.park(name, entry, attempt.owner, sleep, name_it).await {
                Ok(Woken::RolledBack) => {}
                Ok(woken) => {
                    attempt.named = Some(bell.id());
                    attempt.woken = Some(woken);
                    return;
                }
                Err(error) => {
                    // Spent: closed when dropped. The entry names it until refreshed, and a
                    // release that rings it rings nobody. This acquisition reads the line
                    // from now on; the service's next one parks a new connection.
                    tracing::debug!(%error, "the parked connection failed");
                    attempt.bell = None;
                    attempt.unparked = true;
                }
            }
            // No release rings this wait, and one may grant this acquisition the lock
            // meanwhile: read the line again at its pace, not after a whole park.
            until = until.at_most(Instant::now(), attempt.pace.next(0));
        }
        let (name, entry) = (attempt.name.as_str(), Some(attempt.entry.id));
        if let Some(fence) = attempt.waiter.wait_turn(name, entry, until).await {
            attempt.handed = Some(fence);
        }
    }

    /// Removes the waiter entry, if one was placed, and then releases what a release may
    /// have granted it meanwhile.
    async fn abandon(&self, attempt: &mut SqlAttempt) -> Result<()> {
        self.leave_line(attempt).await
    }

    /// Releases by the attempt's owner token when a statement was in flight: first on the
    /// connection it ran on (so the release follows the statement), and if that connection is
    /// unusable (its statement was cut off mid-reply), on a fresh one from the pool. Then
    /// removes the waiter entry, if one was placed. Each part is skipped once it succeeded.
    async fn clean_up(&self, attempt: &mut SqlAttempt) -> Result<()> {
        let (name, owner) = (&attempt.name, attempt.owner);
        if let Some(conn) = attempt.conn.take() {
            attempt.release_owed = true;
            match self.inner.release(Some(conn), name, owner).await {
                Ok(_) => attempt.release_owed = false,
                Err(error) => {
                    tracing::debug!(%error, "release on the interrupted connection failed; using another");
                }
            }
        }
        if attempt.release_owed {
            self.inner.release(None, name, owner).await?;
            attempt.release_owed = false;
        }
        self.leave_line(attempt).await
    }

    fn needs_cleanup(&self, attempt: &SqlAttempt) -> bool {
        attempt.conn.is_some() || attempt.release_owed || attempt.entry.placed()
    }
}

impl SqlSteps {
    /// Whether the acquisition, whose entry is placed, waits on a parked connection: the one
    /// it has, or a new one (MySQL). Without one it reads the line at the line's pace.
    async fn parks(&self, attempt: &mut SqlAttempt) -> bool {
        if !attempt.entry.placed() {
            return false;
        }
        if attempt.bell.is_none() && !attempt.unparked {
            // Boxed: opening a connection is a large future, and rare; every try would
            // carry its size.
            attempt.bell = Box::pin(self.inner.db.bell()).await;
            attempt.unparked = attempt.bell.is_none();
        }
        attempt.bell.is_some()
    }

    /// Removes the waiter entry, if one was placed. A release grants the first waiter the
    /// lock (on every dialect): one may have granted it to this entry before the removal, and
    /// its notification or ring may not have arrived: the owner's hold, if any, is released after
    /// the removal (which no later release can grant past). Each part is skipped once it
    /// succeeded.
    async fn leave_line(&self, attempt: &mut SqlAttempt) -> Result<()> {
        if attempt.entry.placed() {
            self.inner.leave(&attempt.name, attempt.entry.id).await?;
            attempt.entry.removed();
            attempt.release_owed = true;
        }
        if attempt.release_owed {
            self.inner
                .release(None, &attempt.name, attempt.owner)
                .await?;
            attempt.release_owed = false;
        }
        Ok(())
    }
}
