//! Semaphores and read-write locks on SQL: each try is one turn at the claim row (see
//! [`claim_change`](crate::claim_change)): granted by the shared grant rule, or queued (the
//! queue entry kept, refreshed while the acquisition waits). Waiters are woken the way the
//! mutex's are: PostgreSQL notifications, or this service's own changes on the polling
//! dialects, and a re-check when a blocking holder's lease ends.

use std::sync::Arc;
use std::time::Duration;

use lock_core::backend::{Busy, Deadline, Grant, Leases, LockSteps, Try};
use lock_core::{AcquireOptions, Claim, LockName, Result, async_trait};
use tokio::time::Instant;

use crate::claim_change::{Changed, ClaimHeld, Effect, RowKey, micros};
use crate::claim_row::{Decision, Queueing};
use crate::db::Owner;
use crate::lock::Inner;
use crate::pace::Pace;
use crate::waiting::{ENTRY_LIFETIME, REFRESH_EVERY};
use crate::wakeups::Waiter;

/// Compare-and-set rounds one try gets before it backs off and tries again later.
const TRY_ROUNDS: u32 = 8;

/// The longest a PostgreSQL waiter sleeps between tries while notifications flow.
const NOTIFIED_FALLBACK: Duration = Duration::from_secs(5);

/// The steps of acquisitions of one claim.
#[derive(Debug)]
pub(crate) struct SqlClaimSteps {
    pub(crate) inner: Arc<Inner>,
    pub(crate) claim: Claim,
    /// The row's kind: `semaphore`, `rw`, or [`ELECTION`], whose grants also wake (observers
    /// follow every change of the leader).
    pub(crate) kind: &'static str,
}

/// The kind of an election's row.
pub(crate) const ELECTION: &str = "election";

/// One acquisition: its row, its member token (the holder's and the queue entry's, fixed for
/// the acquisition), when its queue entry needs refreshing, and whether the row may hold
/// anything of it (a queue entry, or a grant whose answer was lost).
#[derive(Debug)]
pub(crate) struct ClaimAttempt {
    key: RowKey,
    lease: Duration,
    label: Arc<str>,
    deadline: Deadline,
    waiter: Waiter,
    member: Owner,
    refresh_at: Option<Instant>,
    in_row: bool,
    /// How soon to read the row again where nothing wakes this acquisition.
    pace: Pace,
}

impl SqlClaimSteps {
    /// The steps of `claim` on its semaphore or read-write row.
    pub(crate) fn new(inner: Arc<Inner>, claim: Claim) -> Self {
        let kind = match claim {
            Claim::Permit { .. } => "semaphore",
            _ => "rw",
        };
        Self { inner, claim, kind }
    }
}

#[async_trait]
impl LockSteps for SqlClaimSteps {
    type Attempt = ClaimAttempt;

    fn backend(&self) -> &'static str {
        self.inner.settings.dialect.backend()
    }

    fn server(&self) -> &str {
        &self.inner.settings.server
    }

    fn leases(&self) -> &Leases {
        &self.inner.leases
    }

    fn begin(&self, name: &LockName, options: &AcquireOptions) -> ClaimAttempt {
        ClaimAttempt {
            key: RowKey {
                name: name.clone(),
                kind: self.kind,
            },
            lease: options.lease,
            label: Arc::clone(&options.owner_label),
            deadline: Deadline::after(options.wait),
            waiter: self.inner.wakeups.subscribe(),
            member: Owner::random(),
            refresh_at: None,
            in_row: false,
            pace: Pace::default(),
        }
    }

    async fn try_once(&self, attempt: &mut ClaimAttempt) -> Result<Try> {
        self.inner.ensure_schema().await?;
        let sent = Instant::now();
        let queueing = if attempt.deadline.passed(sent) {
            Queueing::Leave
        } else {
            Queueing::Stay {
                refresh: attempt.refresh_at.is_none_or(|at| sent >= at),
                expires: 0,
            }
        };
        let (claim, member, lease) = (self.claim, attempt.member, micros(attempt.lease));
        let label = Arc::clone(&attempt.label);
        let announce_grants = self.kind == ELECTION;
        // Armed from here: the write may take effect even if its answer never comes.
        attempt.in_row = true;
        let changed = self
            .inner
            .change_claims(&attempt.key, TRY_ROUNDS, "acquire", |row, now| {
                let queueing = match queueing {
                    Queueing::Stay { refresh, .. } => Queueing::Stay {
                        refresh,
                        expires: now.saturating_add(micros(ENTRY_LIFETIME)),
                    },
                    leave => leave,
                };
                let times = (now, now.saturating_add(lease));
                let (decision, write) = row.turn(member, claim, times, &label, queueing)?;
                let waiting = matches!(decision, Decision::Waiting { .. });
                let left = waiting && write && queueing == Queueing::Leave;
                Ok((
                    (decision, now),
                    Effect {
                        write,
                        wake: left || (announce_grants && !waiting),
                    },
                ))
            })
            .await?;
        let (decision, now) = match changed {
            Changed::Done(done) => done,
            Changed::Crowded => return Ok(Try::Busy(Busy::polled())),
        };
        let (until, ahead) = match decision {
            Decision::Granted(fence) => {
                let held = ClaimHeld {
                    inner: Arc::clone(&self.inner),
                    key: attempt.key.clone(),
                    member,
                };
                return Ok(Try::Granted(Grant::new(fence, Arc::new(held), sent)));
            }
            Decision::Waiting { until, ahead } => (until, ahead),
        };
        match queueing {
            Queueing::Leave => attempt.in_row = false,
            Queueing::Stay { refresh, .. } if refresh => {
                attempt.refresh_at = Some(sent + REFRESH_EVERY);
            }
            Queueing::Stay { .. } => {}
        }
        let pushed = self.inner.wakeups.server_side();
        let mut busy = Busy {
            recheck_within: pushed.then_some(NOTIFIED_FALLBACK),
            pushed,
        };
        if !pushed {
            // Nothing tells a waiter of another service of a release: read the row at the
            // pace of the queue, as a mutex's waiter reads its place in line.
            busy = busy.within(attempt.pace.next(ahead));
        }
        if let Some(until) = until {
            // Try again just after the blocking holder's lease ends, at the latest.
            let left = u64::try_from(until.saturating_sub(now)).unwrap_or_default();
            busy = busy.within(Duration::from_micros(left) + Duration::from_millis(1));
        }
        if let Some(at) = attempt.refresh_at {
            busy = busy.within(at.saturating_duration_since(Instant::now()));
        }
        Ok(Try::Busy(busy))
    }

    async fn wait(&self, attempt: &mut ClaimAttempt, until: Deadline) {
        attempt.waiter.wait(attempt.key.name.as_str(), until).await;
    }

    /// Takes the acquisition out of the queue.
    async fn abandon(&self, attempt: &mut ClaimAttempt) -> Result<()> {
        self.clean_up(attempt).await
    }

    /// Takes the member out of the row, holder or waiter: an acquisition interrupted after its
    /// write may have been granted without hearing it.
    async fn clean_up(&self, attempt: &mut ClaimAttempt) -> Result<()> {
        if !attempt.in_row {
            return Ok(());
        }
        let member = attempt.member;
        let changed = self
            .inner
            .change_claims(&attempt.key, TRY_ROUNDS, "cleanup", |row, _| {
                let gone = row.release(member) | row.leave(member);
                Ok((
                    (),
                    Effect {
                        write: gone,
                        wake: gone,
                    },
                ))
            })
            .await?;
        match changed {
            Changed::Done(()) => {
                attempt.in_row = false;
                Ok(())
            }
            Changed::Crowded => Err(lock_core::Error::new(
                lock_core::ErrorKind::Unavailable,
                "other changes to the claim row kept coming first",
            )),
        }
    }

    fn needs_cleanup(&self, attempt: &ClaimAttempt) -> bool {
        attempt.in_row
    }
}
