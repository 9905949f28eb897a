//! Requests gathered into one: the renewals of many holds sent as one round trip.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::{Instant, sleep_until};

/// Gathers the items submitted close together into one batch, run once for all.
///
/// A backend renewing many holds of one service over one connection submits each hold's
/// renewal here and sends each batch as one round trip (a pipeline, one statement): holds
/// renewing at scattered times cost at most one round trip per `delay`, however many there
/// are, and a burst of renewals (the lease scheduler sends a service's renewals together)
/// goes out as one batch. Every caller's item goes into a batch run after its call, so an
/// answer is never older than the request it answers.
#[derive(Debug)]
pub struct Gather<I, O> {
    pending: Arc<Mutex<Pending<I, O>>>,
    delay: Duration,
    longest: Duration,
}

/// Whether an item waits to share a batch with others, or goes out alone at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sending {
    /// In the next batch ([`Gather::submit`]): a renewal the lease scheduler asks for ahead of
    /// the lease's end.
    Gathered,
    /// Alone, at once: a renewal the holder waits for
    /// ([`LockGuard::extend`](crate::LockGuard::extend)).
    AtOnce,
}

/// How long a renewal waits for another to share its round trip: a renewal is due with two
/// thirds of its lease left, so this costs the lease nothing that matters.
const RENEWAL_QUIET: Duration = Duration::from_millis(5);

/// The longest a renewal waits while others keep coming (a burst of 100,000 renewals takes
/// a few hundred milliseconds to submit).
const RENEWAL_LONGEST: Duration = Duration::from_millis(500);

/// The next batch's items, each with where its output goes, and when the last came.
#[derive(Debug)]
struct Pending<I, O> {
    items: Vec<(I, oneshot::Sender<O>)>,
    last: Instant,
}

impl<I: Send + 'static, O: Send + 'static> Gather<I, O> {
    /// The gatherer of a service's renewals: a batch leaves 5 ms after the last renewal
    /// submitted, and at most 500 ms after its first.
    pub fn renewals() -> Self {
        Self::until_quiet(RENEWAL_QUIET, RENEWAL_LONGEST)
    }

    /// A gatherer whose batches leave `delay` after their first item.
    pub fn new(delay: Duration) -> Self {
        Self::until_quiet(delay, delay)
    }

    /// A gatherer whose batches leave once `delay` passed without a new item, and at the
    /// latest `longest` after their first: a burst goes out whole, a steady trickle at least
    /// every `longest`.
    pub fn until_quiet(delay: Duration, longest: Duration) -> Self {
        Self {
            pending: Arc::new(Mutex::new(Pending {
                items: Vec::new(),
                last: Instant::now(),
            })),
            delay,
            longest: longest.max(delay),
        }
    }

    /// Adds `item` to the next batch and waits for its output: `None` when the batch ended
    /// without one (`run` returned fewer outputs than items, or panicked). The first item of a
    /// batch starts it: when the batch leaves, `run` (the first submitter's) gets every item
    /// added meanwhile, in order, and returns one output per item. Needs a tokio runtime: the
    /// batch runs as a task of its own.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a dropped call's item still goes out with its batch; its output is
    /// discarded.
    pub async fn submit<F, Fut>(&self, item: I, run: F) -> Option<O>
    where
        F: FnOnce(Vec<I>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<O>> + Send + 'static,
    {
        let (sender, receiver) = oneshot::channel();
        let now = Instant::now();
        let first = {
            let mut pending = lock(&self.pending);
            pending.items.push((item, sender));
            pending.last = now;
            pending.items.len() == 1
        };
        if first {
            let (pending, delay) = (Arc::clone(&self.pending), self.delay);
            let latest = now + self.longest;
            tokio::spawn(async move {
                let mut leave = now + delay;
                loop {
                    sleep_until(leave.min(latest)).await;
                    let quiet = lock(&pending).last + delay;
                    if quiet <= Instant::now() || leave >= latest {
                        break;
                    }
                    leave = quiet;
                }
                let batch = std::mem::take(&mut lock(&pending).items);
                let (items, senders): (Vec<I>, Vec<_>) = batch.into_iter().unzip();
                let outputs = run(items).await;
                for (sender, output) in senders.into_iter().zip(outputs) {
                    // A caller that stopped waiting has no use for its output.
                    let _gone = sender.send(output);
                }
            });
        }
        receiver.await.ok()
    }

    /// [`submit`](Self::submit) when `sending` is [`Sending::Gathered`]; otherwise `run` on
    /// `item` alone, at once, in the caller's task.
    ///
    /// # Cancel safety
    ///
    /// Gathered, as [`submit`](Self::submit). At once, a dropped call drops its run wherever
    /// it is, so `run` must leave things safe at any await point.
    pub async fn send<F, Fut>(&self, item: I, sending: Sending, run: F) -> Option<O>
    where
        F: FnOnce(Vec<I>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<O>> + Send + 'static,
    {
        match sending {
            Sending::Gathered => self.submit(item, run).await,
            Sending::AtOnce => run(vec![item]).await.into_iter().next(),
        }
    }
}

fn lock<I, O>(pending: &Mutex<Pending<I, O>>) -> MutexGuard<'_, Pending<I, O>> {
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn items_submitted_together_share_one_run_and_each_gets_its_output() {
        let gather = Arc::new(Gather::new(Duration::from_millis(5)));
        let runs = Arc::new(AtomicUsize::new(0));
        let submit = |item: u32| {
            let (gather, runs) = (Arc::clone(&gather), Arc::clone(&runs));
            tokio::spawn(async move {
                gather
                    .submit(item, move |items: Vec<u32>| async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                        items.into_iter().map(|item| item * 10).collect()
                    })
                    .await
            })
        };
        let together: Vec<_> = (1..=3).map(submit).collect();
        let mut outputs = Vec::new();
        for task in together {
            outputs.push(task.await.expect("task"));
        }
        assert_eq!(outputs, [Some(10), Some(20), Some(30)]);
        assert_eq!(runs.load(Ordering::SeqCst), 1, "three items, one run");
        let later = submit(4).await.expect("task");
        assert_eq!(later, Some(40));
        assert_eq!(
            runs.load(Ordering::SeqCst),
            2,
            "an item after the run starts the next"
        );
    }

    /// Submits an item every millisecond for 50 ms; returns how many runs they took.
    async fn trickle(gather: Gather<u32, u32>) -> usize {
        let (gather, runs) = (Arc::new(gather), Arc::new(AtomicUsize::new(0)));
        let mut calls = Vec::new();
        for item in 0..50 {
            let (gather, runs) = (Arc::clone(&gather), Arc::clone(&runs));
            calls.push(tokio::spawn(async move {
                let run = move |items: Vec<u32>| async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    items
                };
                gather.submit(item, run).await
            }));
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        for (item, call) in (0..).zip(calls) {
            assert_eq!(call.await.expect("task"), Some(item));
        }
        runs.load(Ordering::SeqCst)
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_goes_out_whole_until_quiet_and_a_trickle_at_least_every_longest() {
        let delay = Duration::from_millis(5);
        assert_eq!(trickle(Gather::new(delay)).await, 10, "a batch every 5 ms");
        let burst = Gather::until_quiet(delay, Duration::from_secs(1));
        assert_eq!(trickle(burst).await, 1, "one batch once quiet");
        let capped = Gather::until_quiet(delay, Duration::from_millis(20));
        assert_eq!(
            trickle(capped).await,
            3,
            "a batch every 20 ms at the latest"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_run_short_of_outputs_answers_none() {
        let gather = Gather::new(Duration::from_millis(5));
        let output = gather.submit(1_u32, |_| async { Vec::<u32>::new() }).await;
        assert_eq!(output, None);
    }
}
