//! Acquire, run under the supervisor, watch the hold, release.

use std::time::Duration;

use distlock::{
    AcquireOptions, DistributedLock, DistributedLockExt, ElectionExt, Leadership, LockGuard,
};

use crate::cli::Args;
use crate::control::{Report, to_monotonic_ns};
use crate::deadline::stop_deadline;
use crate::exit;
use crate::signals::Signals;
use crate::supervised::Supervised;

/// How often a progress line is printed while waiting.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// How often the supervisor hears the hold's current stop deadline.
const REPORT_EVERY: Duration = Duration::from_millis(100);

/// Runs the whole job and returns lockrun's exit status.
pub(crate) async fn run(args: Args) -> u8 {
    // Installed first, so a signal arriving while lockrun starts is passed on, not fatal.
    let Ok(mut signals) = Signals::install() else {
        eprintln!("lockrun: cannot install signal handlers");
        return exit::SOFTWARE;
    };
    let lock = match distlock::connect(args.url()).await {
        Ok(lock) => lock,
        Err(error) => return fail(&error),
    };
    let options = match args.options(lock.default_options()) {
        Ok(options) => options,
        Err(error) => return fail(&error),
    };
    let guard = tokio::select! {
        guard = acquire_with_progress(&*lock, &args, &options) => match guard {
            Ok(guard) => guard,
            Err(error) => return fail(&error),
        },
        signal = signals.next() => return 128 + signal.as_raw() as u8,
    };
    // The margin the hold gives before it may end, as this backend counts it (a ZooKeeper
    // hold's lease is its session, whatever --lease says).
    let margin = guard
        .valid_until()
        .saturating_duration_since(guard.at_risk_at());
    let grace = args.grace(margin);
    if grace > margin {
        let _ = guard.release().await;
        eprintln!(
            "lockrun: --grace {grace:?} is longer than the {margin:?} between the hold becoming \
             at risk and its end; the command could still run when another holder starts. \
             Use a shorter --grace or a longer lease"
        );
        return exit::USAGE;
    }
    let token = guard.fencing_token().to_string();
    let mut env = vec![
        ("LOCK_NAME", args.name().to_owned()),
        ("LOCK_FENCING_TOKEN", token.clone()),
    ];
    if args.elect.is_some() {
        env.push(("LOCK_EPOCH", token));
    }
    let stop_at = to_monotonic_ns(stop_deadline(&guard, grace));
    let mut command = match Supervised::start(&args.command, &env, grace, stop_at).await {
        Ok(command) => command,
        Err(error) => {
            eprintln!("lockrun: cannot start the command: {error}");
            let _ = guard.release().await;
            return exit::SOFTWARE;
        }
    };
    let status = watch(&mut command, &guard, &mut signals, args.name(), grace).await;
    command.finish().await;
    match status {
        Some(status) => finish(guard, status).await,
        None => {
            let _ = guard.release().await;
            exit::LOST
        }
    }
}

/// Runs until the command ends: `Some(status)` when it exited by itself, `None` when it was
/// stopped because the hold was at risk or lost.
async fn watch(
    command: &mut Supervised,
    guard: &LockGuard,
    signals: &mut Signals,
    name: &str,
    grace: Duration,
) -> Option<u8> {
    let mut reporting = tokio::time::interval(REPORT_EVERY);
    let mut stopping = false;
    loop {
        tokio::select! {
            report = command.next_report() => return match report {
                Some(Report::Exited(status)) if !stopping => Some(status),
                _ => None,
            },
            () = guard.at_risk().cancelled(), if !stopping => {
                let why = if guard.is_lost() { "lost" } else { "at risk of ending" };
                eprintln!("lockrun: the hold on {name:?} is {why}; stopping the command");
                command.stop().await;
                stopping = true;
            }
            _ = reporting.tick(), if !stopping => {
                command.stop_at(to_monotonic_ns(stop_deadline(guard, grace))).await;
            }
            signal = signals.next() => command.signal(signal),
        }
    }
}

/// Acquires, printing a line to stderr every [`PROGRESS_EVERY`] while the lock is held elsewhere.
async fn acquire_with_progress(
    lock: &dyn DistributedLock,
    args: &Args,
    options: &AcquireOptions,
) -> distlock::Result<LockGuard> {
    let acquire = async {
        if args.elect.is_some() {
            let value = &options.owner_label;
            let leading = lock
                .campaign_timeout_with(args.name(), value, options)
                .await;
            return leading.map(Leadership::into_guard);
        }
        match args.claim() {
            None => lock.acquire_timeout_with(args.name(), options).await,
            Some(claim) => {
                lock.acquire_claim_timeout_with(args.name(), claim, options)
                    .await
            }
        }
    };
    tokio::pin!(acquire);
    let started = tokio::time::Instant::now();
    let mut progress = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            outcome = &mut acquire => return outcome,
            _ = progress.tick(), if !args.quiet => {
                eprintln!("lockrun: waiting for {:?}, held elsewhere, for {}s", args.name(), started.elapsed().as_secs());
            }
        }
    }
}

/// Releases after the command exited; a hold lost meanwhile turns the status into [`exit::LOST`].
async fn finish(guard: LockGuard, status: u8) -> u8 {
    match guard.release().await {
        Ok(()) => status,
        Err(error) if error.kind() == distlock::ErrorKind::NotHeld => {
            eprintln!("lockrun: the hold was lost before the command finished: {error}");
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
