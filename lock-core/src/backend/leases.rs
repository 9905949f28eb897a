//! One lease scheduler per service: a single task keeps every hold's timeline (renewals, the
//! at-risk and lost signals), so a guard costs a table entry, not a task and its timers.
//!
//! A grant or a release touches the table under a short lock and wakes the task only when the
//! new hold is due before anything the task already waits for. Renewals due together run in a
//! task of their own while in flight; a backend gathers them into batches
//! ([`Gather`](super::Gather)). When a renewal falls due, every hold whose renewal would fall
//! due within the next half period goes with it, so a service's holds renew together: one
//! batch per renewal period however scattered their grants were.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until};

use crate::backend::Sending;
use crate::backend::watch::{Due, Watch};
use crate::telemetry::LostCause;

/// The lease scheduler of one lock service: every guard the service grants is watched by it.
///
/// A backend keeps one per service (in what its clones share) and hands it to the engine
/// through [`LockSteps::leases`](super::LockSteps::leases). Its task starts on the runtime of
/// the first grant and ends once the service and all its guards are gone; should that runtime
/// end first, the next grant starts it again on its own runtime. Clones share the scheduler.
#[derive(Clone, Default)]
pub struct Leases {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases")
            .field("watched", &self.shared.table().watches.len())
            .finish()
    }
}

#[derive(Default)]
struct Shared {
    table: Mutex<Table>,
    /// Wakes the task: a hold due before its timer, or the service gone.
    wake: Arc<Notify>,
}

#[derive(Default)]
struct Table {
    /// By id: ids only grow, so new watches go in at the end, and a look-up hashes nothing.
    /// Boxed: the map's nodes, which keep room for a few more entries than they hold, cost a
    /// service holding many locks a pointer per spare slot rather than a whole entry.
    watches: BTreeMap<u64, Box<Entry>>,
    /// `(due, id)` of every watch not renewing.
    timeline: BTreeSet<(Instant, u64)>,
    /// What the task's timer is set for; `None` while it waits only to be woken.
    armed: Option<Instant>,
    /// The latest time any hold was timed for. Once the last hold goes, the task's timer
    /// stays set for it: the next hold, due later as a rule, then needs no wake-up. Without
    /// it, a service taking and releasing one lock at a time would wake the task (another
    /// thread, often) for nearly every grant, whenever the task ran after the release.
    horizon: Option<Instant>,
    running: bool,
    next_id: u64,
    /// How many times the task looked at the table.
    runs: u64,
}

struct Entry {
    watch: Watch,
    due: Option<Instant>,
}

/// A guard's place in the scheduler: ended (the watch removed) by the guard's release or drop.
pub(crate) struct Registration {
    shared: Arc<Shared>,
    id: u64,
}

impl Leases {
    /// How many times the scheduler task has looked at its holds (woken or timed): a
    /// diagnostic of how often the service's lease keeping costs a task run.
    #[doc(hidden)]
    pub fn scheduler_runs(&self) -> u64 {
        self.shared.table().runs
    }

    /// Starts watching a hold.
    pub(crate) fn watch(&self, watch: Watch) -> Registration {
        let shared = Arc::clone(&self.shared);
        let mut table = shared.table();
        let id = table.next_id;
        table.next_id += 1;
        table
            .watches
            .insert(id, Box::new(Entry { watch, due: None }));
        table.schedule(id, Instant::now(), &shared.wake);
        let starting = !table.running;
        table.running = true;
        // Spawned after the table is let go: a runtime that is shutting down drops the task
        // inside the spawn, and the task's drop takes the table to mark it stopped.
        drop(table);
        if starting && !start(&shared) {
            shared.table().running = false;
        }
        Registration { shared, id }
    }
}

impl Registration {
    /// The lease was extended outside the scheduler: look at the hold again now.
    pub(crate) fn changed(&self) {
        let mut table = self.shared.table();
        let Some(entry) = table.watches.get_mut(&self.id) else {
            return;
        };
        if entry.watch.renewing {
            return; // the renewal in flight schedules the next step when it ends
        }
        let now = Instant::now();
        entry.watch.extended(now);
        table.schedule(self.id, now, &self.shared.wake);
    }

    /// Stops watching (idempotent). A lost signal fired by the backend and not reported yet
    /// is reported now.
    pub(crate) fn end(&self) {
        let removed = self.shared.table().remove(self.id);
        if let Some(watch) = removed.filter(|watch| watch.lost.is_cancelled()) {
            watch.fire_lost(LostCause::Signalled);
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.end();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}

impl Shared {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs what is due at `now`; returns when the task must look again (`None`: only when
    /// woken).
    fn run_due(self: &Arc<Self>, now: Instant) -> Option<Instant> {
        let mut renewals = Vec::new();
        let mut losses = Vec::new();
        let mut table = self.table();
        table.runs += 1;
        while let Some(&(at, id)) = table.timeline.first() {
            if at > now {
                break;
            }
            table.timeline.pop_first();
            match table.step(id, now) {
                Some(Due::Renew(length)) => renewals.push((id, length)),
                Some(Due::Lost(cause)) => losses.extend(table.remove(id).map(|w| (w, cause))),
                Some(Due::Until(_)) | None => {}
            }
        }
        let early = table.early(now, &renewals);
        let flights: Vec<(u64, Renewal)> = (renewals.iter().chain(&early))
            .filter_map(|&(id, length)| Some((id, table.renewal(id, length, now)?)))
            .collect();
        let horizon = table.horizon.filter(|&at| at > now);
        table.armed = table.timeline.first().map(|&(at, _)| at).or(horizon);
        let armed = table.armed;
        drop(table);
        if !flights.is_empty() {
            tokio::spawn(renew_together(Arc::downgrade(self), flights));
        }
        for (watch, cause) in losses {
            watch.fire_lost(cause);
        }
        armed
    }

    /// A renewal ended: record it and schedule what comes next, or fire the lost signal.
    fn renewed(&self, id: u64, answer: Option<crate::Result<bool>>, renewal: &Renewal) {
        let now = Instant::now();
        let mut table = self.table();
        let Some(entry) = table.watches.get_mut(&id) else {
            return; // released meanwhile
        };
        let lost = entry.watch.renewed(answer, renewal, now);
        let removed = match lost {
            Some(cause) => table.remove(id).map(|watch| (watch, cause)),
            None => {
                table.schedule(id, now, &self.wake);
                None
            }
        };
        drop(table);
        if let Some((watch, cause)) = removed {
            watch.fire_lost(cause);
        }
    }
}

impl Table {
    /// Looks at watch `id` at `now`: times it on the timeline when nothing is due yet, else
    /// puts it first in line and wakes the task if its timer is set for later.
    fn schedule(&mut self, id: u64, now: Instant, wake: &Notify) {
        let at = match self.step(id, now) {
            // `step` timed it.
            Some(Due::Until(at)) => at,
            Some(_) => {
                if let Some(entry) = self.watches.get_mut(&id) {
                    entry.due = Some(now);
                }
                self.timed(now, id);
                now
            }
            None => return,
        };
        if self.armed.is_none_or(|armed| at < armed) {
            self.armed = Some(at);
            wake.notify_one();
        }
    }

    /// Takes watch `id` off the timeline and asks what is due at `now`.
    fn step(&mut self, id: u64, now: Instant) -> Option<Due> {
        let entry = self.watches.get_mut(&id)?;
        if let Some(due) = entry.due.take() {
            self.timeline.remove(&(due, id));
        }
        let due = entry.watch.due(now);
        if let Due::Until(at) = due {
            entry.due = Some(at);
            self.timed(at, id);
        }
        Some(due)
    }

    /// Puts watch `id` on the timeline at `at`.
    fn timed(&mut self, at: Instant, id: u64) {
        self.timeline.insert((at, id));
        self.horizon = self.horizon.max(Some(at));
    }

    /// The holds to renew now beside `due`, the renewals due now: those whose own renewal
    /// comes within the early window ([`Watch::renew_early`]), looked for up to a sixth of the
    /// longest lease among `due` ahead. Each is taken off the timeline: its renewal's end
    /// schedules it again.
    fn early(&mut self, now: Instant, due: &[(u64, Duration)]) -> Vec<(u64, Duration)> {
        let Some(longest) = due.iter().map(|&(_, length)| length).max() else {
            return Vec::new();
        };
        let horizon = now + longest / 6;
        let ahead: Vec<u64> = (self.timeline)
            .range(..=(horizon, u64::MAX))
            .map(|&(_, id)| id)
            .collect();
        let mut early = Vec::new();
        for id in ahead {
            let Some(entry) = self.watches.get_mut(&id) else {
                continue;
            };
            let Some(length) = entry.watch.renew_early(now) else {
                continue;
            };
            if let Some(at) = entry.due.take() {
                self.timeline.remove(&(at, id));
            }
            early.push((id, length));
        }
        early
    }

    /// Marks watch `id` renewing, asked for at `now`, and says what the renewal needs.
    fn renewal(&mut self, id: u64, length: Duration, now: Instant) -> Option<Renewal> {
        let entry = self.watches.get_mut(&id)?;
        entry.watch.renewing = true;
        let watch = &entry.watch;
        Some(Renewal {
            lease: Arc::clone(&watch.lease),
            held: Arc::clone(&watch.held),
            length,
            before: watch.lease.length(),
            asked: now,
        })
    }

    fn remove(&mut self, id: u64) -> Option<Watch> {
        let entry = self.watches.remove(&id)?;
        if let Some(due) = entry.due {
            self.timeline.remove(&(due, id));
        }
        Some(entry.watch)
    }
}

/// One renewal in flight.
pub(crate) struct Renewal {
    lease: Arc<crate::backend::lease::Lease>,
    held: Arc<dyn crate::backend::HeldLock>,
    /// The lease length asked for.
    pub(crate) length: Duration,
    /// The lease length renewals asked for before this one.
    pub(crate) before: Duration,
    /// When the scheduler asked for it: the holds renewed together share it.
    pub(crate) asked: Instant,
}

impl Renewal {
    /// Renews, unless the lease ends first, and reports back.
    async fn run(self, shared: Weak<Shared>, id: u64) {
        let end = self.lease.valid_until();
        let answer = tokio::select! {
            biased;
            () = sleep_until(end) => None,
            renewed = self.lease.renew(&*self.held, self.length, Sending::Gathered) => Some(renewed),
        };
        if let Some(shared) = shared.upgrade() {
            shared.renewed(id, answer, &self);
        }
    }
}

/// Runs renewals that fell due together in one task: each reaches the backend in the task's
/// first poll, so a backend gathering renewals ([`Gather`](super::Gather)) finds them all
/// submitted at once, however many there are. Spawned one by one, or cut short by the
/// runtime's cooperative budget, they would reach it over as long as the runtime takes to get
/// to them all, and a gap would split the batch: the task runs unconstrained, since the work
/// of one poll is bounded by the renewals due. Each renewal still runs on its own: a slow one
/// holds none of the others back, and one that panics ends alone.
async fn renew_together(shared: Weak<Shared>, flights: Vec<(u64, Renewal)>) {
    let mut running: FuturesUnordered<_> = (flights.into_iter())
        .map(|(id, renewal)| AssertUnwindSafe(renewal.run(Weak::clone(&shared), id)).catch_unwind())
        .collect();
    tokio::task::unconstrained(async move { while running.next().await.is_some() {} }).await;
}

/// Spawns the scheduler task on the current runtime; `false` outside one.
fn start(shared: &Arc<Shared>) -> bool {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("a hold granted outside a tokio runtime is not watched");
        return false;
    };
    let running = Running(Arc::downgrade(shared));
    let wake = Arc::clone(&shared.wake);
    runtime.spawn(async move {
        loop {
            let Some(shared) = running.0.upgrade() else {
                return;
            };
            let next = shared.run_due(Instant::now());
            drop(shared);
            match next {
                Some(at) => tokio::select! {
                    () = sleep_until(at) => {}
                    () = wake.notified() => {}
                },
                None => wake.notified().await,
            }
        }
    });
    true
}

/// Owned by the scheduler task: when the task is dropped with its runtime, the next grant
/// starts another.
struct Running(Weak<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(shared) = self.0.upgrade() {
            let mut table = shared.table();
            table.running = false;
            table.armed = None;
        }
    }
}
