//! Requests gathered into one: the renewals of many holds sent as one round trip.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;

/// Gathers the items submitted within `delay` of the first into one batch, run once for all.
///
/// A backend renewing many holds of one service over one connection submits each hold's
/// renewal here and sends each batch as one round trip (a pipeline, one statement): holds
/// renewing at scattered times cost at most one round trip per `delay`, however many there
/// are. Every caller's item goes into a batch run after its call, so an answer is never older
/// than the request it answers.
#[derive(Debug)]
pub struct Gather<I, O> {
    pending: Arc<Mutex<Pending<I, O>>>,
    delay: Duration,
}

/// The next batch's items, each with where its output goes.
type Pending<I, O> = Vec<(I, oneshot::Sender<O>)>;

impl<I: Send + 'static, O: Send + 'static> Gather<I, O> {
    /// A gatherer whose batches leave `delay` after their first item.
    pub fn new(delay: Duration) -> Self {
        Self {
            pending: Arc::new(Mutex::new(Vec::new())),
            delay,
        }
    }

    /// Adds `item` to the next batch and waits for its output: `None` when the batch ended
    /// without one (`run` returned fewer outputs than items, or panicked). The first item of a
    /// batch starts it: `delay` later, `run` (the first submitter's) gets every item added
    /// meanwhile, in order, and returns one output per item. Needs a tokio runtime: the batch
    /// runs as a task of its own.
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
        let first = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            pending.push((item, sender));
            pending.len() == 1
        };
        if first {
            let (pending, delay) = (Arc::clone(&self.pending), self.delay);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let batch =
                    std::mem::take(&mut *pending.lock().unwrap_or_else(PoisonError::into_inner));
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

    #[tokio::test(start_paused = true)]
    async fn a_run_short_of_outputs_answers_none() {
        let gather = Gather::new(Duration::from_millis(5));
        let output = gather.submit(1_u32, |_| async { Vec::<u32>::new() }).await;
        assert_eq!(output, None);
    }
}
