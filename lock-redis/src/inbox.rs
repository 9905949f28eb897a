//! A service's inbox: one channel, subscribed once, on which every waiting acquisition of the
//! service hears that it is first in line. The subscriber hands each message to the one
//! acquisition it names, so a release wakes one task in one process however many wait.
//!
//! A waiting acquisition's owner token starts with its service's id, so a release script
//! finds the first waiter's inbox from its token alone: `{P:}:waiters:SERVICE`. Single masters
//! and Sentinel-managed masters use inboxes; a cluster cannot (a script may publish only on a
//! channel of its lock's slot), so there each wait subscribes to a channel of its own under the
//! lock's hash tag.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use crate::subscriber::{Wake, Wakes};

/// One service's inbox: its channel and the acquisitions waiting on it, by owner token.
#[derive(Debug)]
pub(crate) struct Inbox {
    service: u64,
    channel: String,
    /// Whether the channel is subscribed, as far as the subscriber task knows.
    live: AtomicBool,
    /// Whether the subscriber was asked to subscribe (once, for the service's life).
    requested: AtomicBool,
    waiters: Mutex<HashMap<Box<str>, watch::Sender<Wake>>>,
}

/// The prefix of every inbox channel under key prefix `prefix`; a release script appends the
/// first waiter's service id. `{P:}` is no lock's hash tag (a lock name is never empty).
pub(crate) fn channel_prefix(prefix: &str) -> String {
    format!("{{{prefix}:}}:waiters:")
}

impl Inbox {
    /// A fresh inbox, with a random service id, under key prefix `prefix`.
    pub(crate) fn new(prefix: &str) -> Self {
        let service = rand::random::<u64>();
        Self {
            service,
            channel: format!("{}{service:016x}", channel_prefix(prefix)),
            live: AtomicBool::new(false),
            requested: AtomicBool::new(false),
            waiters: Mutex::default(),
        }
    }

    /// The channel this service's waiters hear on.
    pub(crate) fn channel(&self) -> &str {
        &self.channel
    }

    /// A fresh owner token of this service: its id, then 64 random bits (32 hex digits, as
    /// every owner token).
    pub(crate) fn token(&self) -> String {
        format!("{:016x}{:016x}", self.service, rand::random::<u64>())
    }

    /// `true` the first time only: the caller then asks the subscriber to subscribe.
    pub(crate) fn first_request(&self) -> bool {
        !self.requested.swap(true, Ordering::AcqRel)
    }

    /// Registers the acquisition with owner `token`; it hears until the registration drops.
    pub(crate) fn register(self: &Arc<Self>, token: &str) -> Registration {
        // Read under the lock that `deliver` takes after storing: a registration made while
        // the channel comes up either sees it up or is told so.
        let mut waiters = self.lock();
        let (sender, receiver) = watch::channel(Wake {
            generation: 0,
            live: self.live.load(Ordering::Acquire),
            next: None,
        });
        waiters.insert(token.into(), sender);
        drop(waiters);
        Registration {
            inbox: Arc::clone(self),
            token: token.into(),
            wakes: Wakes::new(receiver),
        }
    }

    /// Hands a message naming `next` to that acquisition alone; without a name (the channel
    /// was subscribed again, or lost) tells every acquisition, which then try at once.
    pub(crate) fn deliver(&self, live: bool, next: Option<Arc<str>>) {
        self.live.store(live, Ordering::Release);
        let waiters = self.lock();
        let notify = |sender: &watch::Sender<Wake>, next: Option<Arc<str>>| {
            sender.send_modify(|wake| {
                wake.generation += 1;
                wake.live = live;
                wake.next = next;
            });
        };
        match next {
            // `TOKEN`, or `TOKEN FENCE` for a waiter the release granted the lock to.
            Some(message) => {
                let token = message.split(' ').next().unwrap_or_default();
                if let Some(sender) = waiters.get(token) {
                    notify(sender, Some(message));
                }
            }
            None => waiters.values().for_each(|sender| notify(sender, None)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Box<str>, watch::Sender<Wake>>> {
        self.waiters.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One waiting acquisition's place in its service's inbox; leaves it on drop.
#[derive(Debug)]
pub(crate) struct Registration {
    inbox: Arc<Inbox>,
    token: Box<str>,
    wakes: Wakes,
}

impl std::ops::Deref for Registration {
    type Target = Wakes;

    fn deref(&self) -> &Wakes {
        &self.wakes
    }
}

impl std::ops::DerefMut for Registration {
    fn deref_mut(&mut self) -> &mut Wakes {
        &mut self.wakes
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.inbox.lock().remove(&self.token);
    }
}
