//! Acquire, run, watch, release.

use std::time::Duration;

use distlock::{AcquireOptions, DistributedLock, DistributedLockExt, ErrorKind, LockGuard};
use rustix::process::Signal;
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::Args;
use crate::{child, exit};

/// How often a progress line is printed while waiting.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Runs the whole job and returns lockrun's exit status.
pub(crate) async fn run(args: Args) -> u8 {
    let options = AcquireOptions::builder().lease(args.lease);
    let options = match args.wait {
        Some(wait) => options.wait(wait),
        None => options.wait_forever(),
    }
    .build();
    let options = match options {
        Ok(options) => options,
        Err(error) => return fail(&error),
    };
    let lock = match distlock::connect(&args.url).await {
        Ok(lock) => lock,
        Err(error) => return fail(&error),
    };
    let guard = match acquire_with_progress(&*lock, &args, &options).await {
        Ok(guard) => guard,
        Err(error) => return fail(&error),
    };
    let mut command = match child::spawn(&args.command, &args.name, guard.fencing_token()) {
        Ok(command) => command,
        Err(status) => {
            let _ = guard.release().await;
            return status;
        }
    };
    let (Ok(mut terminate), Ok(mut interrupt), Ok(mut hangup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        child::terminate(&mut command, args.grace).await;
        return exit::SOFTWARE;
    };
    loop {
        tokio::select! {
            status = command.wait() => {
                let status = match status {
                    Ok(status) => exit::for_child(status),
                    Err(error) => { eprintln!("lockrun: waiting for the command: {error}"); exit::SOFTWARE }
                };
                return finish(guard, status).await;
            }
            () = guard.lost().cancelled() => {
                eprintln!("lockrun: lost the lock {:?}; stopping the command", args.name);
                child::terminate(&mut command, args.grace).await;
                let _ = guard.release().await;
                return exit::LOST;
            }
            _ = terminate.recv() => child::signal(&command, Signal::TERM),
            _ = interrupt.recv() => child::signal(&command, Signal::INT),
            _ = hangup.recv() => child::signal(&command, Signal::HUP),
        }
    }
}

/// Acquires, printing a line to stderr every [`PROGRESS_EVERY`] while the lock is held elsewhere.
async fn acquire_with_progress(
    lock: &dyn DistributedLock,
    args: &Args,
    options: &AcquireOptions,
) -> distlock::Result<LockGuard> {
    let acquire = lock.acquire_timeout_with(args.name.as_str(), options);
    tokio::pin!(acquire);
    let started = tokio::time::Instant::now();
    let mut progress = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            outcome = &mut acquire => return outcome,
            _ = progress.tick(), if !args.quiet => {
                eprintln!("lockrun: waiting for {:?}, held elsewhere, for {}s", args.name, started.elapsed().as_secs());
            }
        }
    }
}

/// Releases after the command exited; a hold lost meanwhile turns the status into [`exit::LOST`].
async fn finish(guard: LockGuard, status: u8) -> u8 {
    match guard.release().await {
        Ok(()) => status,
        Err(error) if error.kind() == ErrorKind::NotHeld => {
            eprintln!("lockrun: the lock was lost before the command finished: {error}");
            exit::LOST
        }
        Err(error) => {
            eprintln!("lockrun: release failed ({error}); the lease will free the lock");
            status
        }
    }
}

fn fail(error: &distlock::Error) -> u8 {
    eprintln!("lockrun: {error}");
    exit::for_error(error)
}
