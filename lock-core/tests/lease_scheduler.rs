//! The lease scheduler: one task per service watches every hold, renews each before its lease
//! ends (the holds of a service together, in one batch), and survives the runtime it started
//! on.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use lock_core::backend::{Grant, HeldLock, Leases};
use lock_core::{AcquireOptions, DistributedLockExt, LockGuard, LockName, MemoryLock};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::time::Instant;

fn lease(millis: u64, auto_renew: bool) -> AcquireOptions {
    AcquireOptions::builder()
        .lease(Duration::from_millis(millis))
        .auto_renew(auto_renew)
        .build()
        .expect("options")
}

/// Holds `count` names `PREFIX/INDEX`.
async fn hold_many(
    lock: &MemoryLock,
    prefix: &str,
    count: usize,
    options: &AcquireOptions,
) -> Vec<LockGuard> {
    let mut guards = Vec::with_capacity(count);
    for index in 0..count {
        let name = format!("{prefix}/{index}");
        let guard = lock.acquire_timeout_with(name.as_str(), options).await;
        guards.push(guard.expect("a free name is granted"));
    }
    guards
}

#[tokio::test]
async fn a_thousand_holds_cost_no_task_each() {
    let lock = MemoryLock::new();
    let before = Handle::current().metrics().num_alive_tasks();
    let guards = hold_many(&lock, "many", 1000, &AcquireOptions::default()).await;
    let during = Handle::current().metrics().num_alive_tasks();
    assert!(
        during <= before + 2,
        "1000 holds run {during} tasks (before: {before})"
    );
    for guard in guards {
        guard.release().await.expect("release");
    }
}

#[tokio::test(start_paused = true)]
async fn renewed_holds_live_on_and_unrenewed_ones_end() {
    let lock = MemoryLock::new();
    let renewed = hold_many(&lock, "renewed", 200, &lease(300, true)).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let unrenewed = hold_many(&lock, "unrenewed", 3, &lease(300, false)).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let lost = renewed.iter().filter(|guard| guard.is_lost()).count();
    assert_eq!(lost, 0, "renewed holds lost over 16 leases");
    assert!(
        unrenewed.iter().all(LockGuard::is_lost),
        "holds without renewal outlived their lease"
    );
    let left = lock.lease_left(renewed[0].name()).unwrap_or_default();
    assert!(left > Duration::from_millis(100), "lease left: {left:?}");
}

#[tokio::test(start_paused = true)]
async fn holds_granted_at_scattered_times_come_to_renew_together() {
    let lock = MemoryLock::new();
    let options = lease(3000, true);
    let mut guards = Vec::new();
    // Granted over the first 300 ms of a one-second renewal period.
    for batch in 0..10 {
        guards.extend(hold_many(&lock, &format!("scattered/{batch}"), 10, &options).await);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let mut lease_ends: Vec<Duration> = guards
        .iter()
        .map(|guard| lock.lease_left(guard.name()).unwrap_or_default())
        .collect();
    lease_ends.sort();
    lease_ends.dedup();
    assert_eq!(
        lease_ends.len(),
        1,
        "100 holds renewed at {} different instants: {lease_ends:?}",
        lease_ends.len()
    );
    assert!(
        guards.iter().all(|guard| !guard.is_lost()),
        "a hold was lost"
    );
    for guard in guards {
        guard.release().await.expect("release");
    }
}

/// A hold that records which task asked for each of its renewals, and how often another task
/// had run by then.
#[derive(Debug, Default)]
struct TaskRecorder {
    tasks: Mutex<Vec<(Option<tokio::task::Id>, u64)>>,
    /// Woken by every renewal: counts how often it got to run.
    ticker: Notify,
    ticks: AtomicU64,
}

#[async_trait]
impl HeldLock for TaskRecorder {
    async fn release(&self) -> lock_core::Result<bool> {
        Ok(true)
    }

    async fn renew(&self, _lease: Duration) -> lock_core::Result<bool> {
        let asked = (tokio::task::try_id(), self.ticks.load(Ordering::Relaxed));
        self.tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(asked);
        self.ticker.notify_one();
        Ok(true)
    }
}

/// Renewals that fall due together reach the backend from one task, in one pass with no other
/// task running in between: spawned one by one, or cut short by the runtime's budget, they
/// would arrive over as long as the runtime takes to get to them all, and a backend gathering
/// renewals would cut its batch at a gap.
#[tokio::test(start_paused = true)]
async fn renewals_due_together_are_asked_for_from_one_task() {
    let recorder = Arc::new(TaskRecorder::default());
    let ticker = Arc::clone(&recorder);
    tokio::spawn(async move {
        loop {
            ticker.ticker.notified().await;
            ticker.ticks.fetch_add(1, Ordering::Relaxed);
        }
    });
    let leases = Leases::default();
    let options = lease(3000, true);
    let guards: Vec<LockGuard> = (0..1000)
        .map(|index| {
            let held: Arc<dyn HeldLock> = Arc::clone(&recorder) as Arc<dyn HeldLock>;
            let name = LockName::new(format!("together/{index}")).expect("name");
            Grant::new(1, held, Instant::now()).into_guard(name, "test", &options, &leases)
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let tasks = recorder
        .tasks
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    assert_eq!(tasks.len(), 1000, "renewals asked for in the first period");
    let distinct: HashSet<_> = tasks.into_iter().collect();
    assert_eq!(
        distinct.len(),
        1,
        "1000 renewals due together were asked for in {} different tasks or passes",
        distinct.len()
    );
    drop(guards);
}

/// A hold whose server answers renewals `delay` after they were asked for, and records when
/// each was asked for.
#[derive(Debug)]
struct SlowAnswers {
    delay: Duration,
    asked: Mutex<Vec<Instant>>,
}

#[async_trait]
impl HeldLock for SlowAnswers {
    async fn release(&self) -> lock_core::Result<bool> {
        Ok(true)
    }

    async fn renew(&self, _lease: Duration) -> lock_core::Result<bool> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Instant::now());
        tokio::time::sleep(self.delay).await;
        Ok(true)
    }
}

/// Holds renew once a period however long their answers take: the next renewal counts from
/// when the last was asked for, as the lease does. Counting from the answer would stretch the
/// period by the round trip, and holds whose answers took different times would drift apart.
#[tokio::test(start_paused = true)]
async fn slow_answers_do_not_stretch_the_renewal_period() {
    let server = Arc::new(SlowAnswers {
        delay: Duration::from_millis(300),
        asked: Mutex::new(Vec::new()),
    });
    let leases = Leases::default();
    let options = lease(3000, true);
    let start = Instant::now();
    let guards: Vec<LockGuard> = (0..10)
        .map(|index| {
            let held: Arc<dyn HeldLock> = Arc::clone(&server) as Arc<dyn HeldLock>;
            let name = LockName::new(format!("slow/{index}")).expect("name");
            Grant::new(1, held, start).into_guard(name, "test", &options, &leases)
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    let mut asked: Vec<Duration> = (server.asked.lock())
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|at| *at - start)
        .collect();
    asked.dedup();
    assert_eq!(
        asked.len(),
        10,
        "renewals in 10.5 s of one-second periods went out at {asked:?}"
    );
    assert!(
        guards.iter().all(|guard| !guard.is_lost()),
        "a hold was lost"
    );
}

#[test]
fn the_scheduler_starts_again_on_a_new_runtime() {
    let lock = MemoryLock::new();
    let first = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    first.block_on(async {
        let guard = lock.acquire("scheduler/first").await.expect("acquire");
        guard.release().await.expect("release");
    });
    drop(first);
    let second = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    second.block_on(async {
        let options = lease(200, false);
        let guard = lock
            .acquire_timeout_with("scheduler/second", &options)
            .await;
        let guard = guard.expect("acquire");
        let signalled = tokio::time::timeout(Duration::from_secs(3), guard.lost().cancelled());
        assert!(
            signalled.await.is_ok(),
            "no lost signal: the scheduler died with the first runtime"
        );
    });
}

/// A grant made on a runtime that is shutting down (a task polled while the runtime goes)
/// spawns the scheduler task onto it, and the runtime drops that task at once, inside the
/// spawn. The grant must not be holding the scheduler's table then: the task's drop needs it.
#[test]
fn a_grant_on_a_runtime_that_shut_down_does_not_hang() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let handle = runtime.handle().clone();
        drop(runtime);
        let _entered = handle.enter();
        let lock = MemoryLock::new();
        let mut acquiring = std::pin::pin!(lock.try_acquire("shut-down/grant"));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let granted = (0..100).find_map(|_| match acquiring.as_mut().poll(&mut context) {
            std::task::Poll::Ready(granted) => Some(granted),
            std::task::Poll::Pending => None,
        });
        let _sent = done.send(granted.map(|granted| granted.map(|guard| guard.is_some())));
    });
    let granted = finished
        .recv_timeout(Duration::from_secs(10))
        .expect("a grant on a runtime that shut down hung");
    assert!(matches!(granted, Some(Ok(true))), "{granted:?}");
}

/// A hold whose release and renewals the server grants at once.
#[derive(Debug)]
struct AtOnce;

#[async_trait]
impl HeldLock for AtOnce {
    async fn release(&self) -> lock_core::Result<bool> {
        Ok(true)
    }

    async fn renew(&self, _lease: Duration) -> lock_core::Result<bool> {
        Ok(true)
    }
}

/// One lock taken and released over and over, the scheduler task running between a release
/// and the next grant: the task, which may live on another thread, is not woken for each
/// grant, since each new hold falls due after the one its timer is already set for. A hold
/// due before that timer still wakes it, and is lost on time.
#[tokio::test(start_paused = true)]
async fn one_lock_taken_over_and_over_does_not_wake_the_scheduler_each_time() {
    let leases = Leases::default();
    let options = lease(30_000, true);
    let held: Arc<dyn HeldLock> = Arc::new(AtOnce);
    let name = LockName::new("again/and/again").expect("name");
    for _ in 0..200 {
        let guard = Grant::new(1, Arc::clone(&held), Instant::now());
        let guard = guard.into_guard(name.clone(), "test", &options, &leases);
        guard.release().await.expect("release");
        tokio::task::yield_now().await;
    }
    let runs = leases.scheduler_runs();
    assert!(
        runs <= 3,
        "200 grants woke the lease scheduler {runs} times"
    );
    let short = Grant::new(2, held, Instant::now());
    let short = short.into_guard(name, "test", &lease(300, false), &leases);
    let lost = tokio::time::timeout(Duration::from_secs(1), short.lost().cancelled());
    assert!(
        lost.await.is_ok(),
        "a hold due before the timer was never lost"
    );
}
