//! `with_lock` (and `with_permit`, `with_read`, `with_write`): run a future under a hold, with
//! loss detection and same-task re-entry.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, resume_unwind};

use futures_util::FutureExt;

use crate::{
    AcquireOptions, Claim, DistributedLock, Error, ErrorKind, LockGuard, LockHandle, LockName,
    Result,
};

/// One hold taken by an enclosing `with_lock` in the current task.
#[derive(Clone)]
struct Entered {
    /// The lock service's address: re-entry is per service instance, as Curator's is per mutex.
    service: usize,
    /// `None` for the mutex.
    claim: Option<Claim>,
    handle: LockHandle,
}

tokio::task_local! {
    /// The holds of the `with_lock` calls enclosing the current point of this task.
    static ENTERED: RefCell<Vec<Entered>>;
}

/// Runs `body` under a hold of `name`: the mutex (`claim` `None`) or a shared `claim`. A
/// nested call in the same task re-enters a hold that covers it (see [`Claim::covers`]); a
/// read hold asking for a write fails instead of deadlocking on itself.
pub(crate) async fn run_with_lock<L, F, Fut, T>(
    lock: &L,
    name: LockName,
    claim: Option<Claim>,
    options: &AcquireOptions,
    body: F,
) -> Result<T>
where
    L: DistributedLock + ?Sized,
    F: FnOnce(LockHandle) -> Fut,
    Fut: Future<Output = T>,
{
    let service = lock.service_identity();
    let enclosing = ENTERED
        .try_with(|entered| entered.borrow().clone())
        .unwrap_or_default();
    if let Some(outer) = enclosing
        .iter()
        .find(|e| e.service == service && e.handle.name() == &name && same_kind(e.claim, claim))
    {
        if !covers(outer.claim, claim) {
            return Err(Error::invalid_input(
                "a write hold asked for inside a read hold of the same name in the same task \
                 would wait for itself: take the write hold first",
            )
            .with_backend(lock.backend())
            .with_lock(&name));
        }
        let handle = outer.handle.clone();
        return until_lost(lock.backend(), &handle, body(handle.clone())).await;
    }

    let Some(guard) = acquire(lock, &name, claim, options).await? else {
        let waited = options.wait.unwrap_or_default();
        return Err(Error::new(
            ErrorKind::Timeout,
            format!("still held elsewhere after waiting {waited:?}"),
        )
        .with_backend(lock.backend())
        .with_operation("with_lock")
        .with_lock(&name));
    };
    let handle = guard.handle();
    let mut entered = enclosing;
    entered.push(Entered {
        service,
        claim,
        handle: handle.clone(),
    });
    let run = until_lost(lock.backend(), &handle, body(handle.clone()));
    let outcome = ENTERED
        .scope(RefCell::new(entered), AssertUnwindSafe(run).catch_unwind())
        .await;
    let released = guard.release().await;
    match outcome {
        Err(panic) => resume_unwind(panic),
        Ok(Err(lost)) => Err(lost),
        Ok(Ok(value)) => match released {
            Err(error) if error.kind() == ErrorKind::NotHeld => {
                Err(lost_error(lock.backend(), &name))
            }
            Err(error) => {
                tracing::warn!(%error, "release after with_lock failed; the lease will end the hold");
                Ok(value)
            }
            Ok(()) => Ok(value),
        },
    }
}

async fn acquire<L: DistributedLock + ?Sized>(
    lock: &L,
    name: &LockName,
    claim: Option<Claim>,
    options: &AcquireOptions,
) -> Result<Option<LockGuard>> {
    match claim {
        None => lock.acquire_with(name, options).await,
        Some(claim) => lock.acquire_claim_with(name, claim, options).await,
    }
}

/// Whether two holds are of one object: the mutex, a semaphore, or a read-write lock.
fn same_kind(outer: Option<Claim>, inner: Option<Claim>) -> bool {
    matches!(
        (outer, inner),
        (None, None)
            | (Some(Claim::Permit { .. }), Some(Claim::Permit { .. }))
            | (
                Some(Claim::Read | Claim::Write),
                Some(Claim::Read | Claim::Write)
            )
    )
}

fn covers(outer: Option<Claim>, inner: Option<Claim>) -> bool {
    match (outer, inner) {
        (Some(outer), Some(inner)) => outer.covers(&inner),
        (outer, inner) => outer == inner,
    }
}

/// Runs `body` unless the hold is lost first; on loss `body` is dropped.
async fn until_lost<Fut: Future>(
    backend: &'static str,
    handle: &LockHandle,
    body: Fut,
) -> Result<Fut::Output> {
    tokio::select! {
        biased;
        () = handle.lost().cancelled() => Err(lost_error(backend, handle.name())),
        value = body => Ok(value),
    }
}

fn lost_error(backend: &'static str, name: &LockName) -> Error {
    Error::new(
        ErrorKind::Lost,
        "the hold was lost while the closure ran; its future was dropped",
    )
    .with_backend(backend)
    .with_operation("with_lock")
    .with_lock(name)
}
