//! Waking waiters: PostgreSQL notifications through one shared listener per lock service, or
//! releases made in this process for the polling dialects.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use lock_core::backend::Deadline;

use crate::db::Owner;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
#[cfg(feature = "postgres")]
use tokio_util::sync::CancellationToken;
use tokio_util::sync::DropGuard;

/// Capacity of the wake-up channel; a waiter that falls further behind just re-checks.
const CAPACITY: usize = 1024;

/// Something that may have freed a lock.
#[derive(Clone, Debug)]
pub(crate) enum Wake {
    /// The named lock was released: every acquisition of it re-checks.
    Released(Arc<str>),
    /// The named lock was released and its first waiter in line is the one with this entry
    /// id: that acquisition alone re-checks (claims of the name re-check too).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Handoff(Arc<str>, Owner),
    /// The named lock was released and granted, with this fence, to the acquisition with this
    /// entry id, on the terms its entry carries: that acquisition holds it without another
    /// statement (claims of the name re-check).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Granted(Arc<str>, Owner, u64),
    /// Releases may have been missed (the listener reconnected): every waiter re-checks.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Everyone,
}

/// The wake-up hub of one lock service.
#[derive(Debug)]
pub(crate) struct Wakeups {
    /// The service's random id, which begins the ids of its waiter entries; on PostgreSQL it
    /// names the channel its listener hears grants on.
    service: u64,
    sender: broadcast::Sender<Wake>,
    /// Whether a listener is subscribed to the server's release notifications right now.
    listening: Arc<AtomicBool>,
    /// Stops the listener task when the lock service goes away.
    _stop: Option<DropGuard>,
}

impl Wakeups {
    /// Wake-ups from releases made through this lock service only (polling dialects).
    pub(crate) fn local() -> Self {
        Self {
            service: rand::random(),
            sender: broadcast::channel(CAPACITY).0,
            listening: Arc::new(AtomicBool::new(false)),
            _stop: None,
        }
    }

    /// Wake-ups from PostgreSQL notifications, received by one background listener.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres(db: &crate::db::postgres::PgDb) -> Self {
        let sender = broadcast::channel(CAPACITY).0;
        let listening = Arc::new(AtomicBool::new(false));
        let stop = CancellationToken::new();
        let (options, channel, timeout) = db.listener_source();
        let service = rand::random();
        let listener = crate::listener::Listener {
            options,
            channels: [channel, crate::listener::service_channel(service)],
            timeout,
            sender: sender.clone(),
            listening: Arc::clone(&listening),
        };
        let token = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = token.cancelled() => {}
                () = listener.run() => {}
            }
        });
        Self {
            service,
            sender,
            listening,
            _stop: Some(stop.drop_guard()),
        }
    }

    /// A new id for a waiter entry of this service.
    pub(crate) fn entry_id(&self) -> Owner {
        Owner::in_service(self.service)
    }

    /// Whether the server currently pushes release notifications to this service.
    pub(crate) fn server_side(&self) -> bool {
        self.listening.load(Ordering::Acquire)
    }

    /// Tells this service's waiters that `name` was released here, unless the server's
    /// notification will tell them anyway.
    pub(crate) fn released(&self, name: &str) {
        if self.server_side() {
            return;
        }
        let _no_waiters = self.sender.send(Wake::Released(Arc::from(name)));
    }

    /// A waiter that sees every wake-up from now on. Subscribe before the acquire attempt, so a
    /// release between the attempt and the wait is not missed.
    pub(crate) fn subscribe(&self) -> Waiter {
        Waiter {
            receiver: self.sender.subscribe(),
        }
    }
}

/// One waiter's view of the wake-ups.
#[derive(Debug)]
pub(crate) struct Waiter {
    receiver: broadcast::Receiver<Wake>,
}

impl Waiter {
    /// Waits until a wake-up that concerns `name` arrives, or `until`, whichever is first.
    pub(crate) async fn wait(&mut self, name: &str, until: Deadline) {
        let _no_entry_no_grant = self.wait_turn(name, None, until).await;
    }

    /// Waits until a wake-up that concerns `name` arrives, or `until`, whichever is first; with
    /// `entry`, a release that wakes or grants another waiter first in line does not count.
    /// `Some(fence)` when a release granted the lock to `entry`.
    pub(crate) async fn wait_turn(
        &mut self,
        name: &str,
        entry: Option<Owner>,
        until: Deadline,
    ) -> Option<u64> {
        // A timer, even one due now, fires on the runtime's next tick (up to a millisecond).
        if until.passed(tokio::time::Instant::now()) {
            return None;
        }
        let another = |first: Owner| entry.is_some_and(|entry| entry != first);
        loop {
            tokio::select! {
                () = until.sleep() => return None,
                wake = self.receiver.recv() => match wake {
                    Ok(Wake::Released(released)) if &*released != name => {}
                    Ok(Wake::Handoff(released, first)) if &*released != name || another(first) => {}
                    Ok(Wake::Granted(released, first, _))
                        if &*released != name || another(first) => {}
                    Ok(Wake::Granted(_, first, fence)) if entry == Some(first) => {
                        return Some(fence);
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => return None,
                    Err(RecvError::Closed) => {
                        until.sleep().await;
                        return None;
                    }
                },
            }
        }
    }
}
