//! One shared pub/sub connection per lock service, dispatching release wake-ups to waiters.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::inbox::Inbox;
use crate::pubsub::{Event, PubSub};
use crate::source::Server;

/// What a waiter sees of its channel: a counter that moves on every wake-up, whether the
/// subscription is confirmed (when it is not, the waiter falls back to polling), and whom the
/// last release named as the next to try.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wake {
    pub(crate) generation: u64,
    pub(crate) live: bool,
    /// The token of the first queued waiter, from the last release message; `None` after a
    /// subscription or connection change (everyone should try).
    pub(crate) next: Option<Arc<str>>,
}

struct Entry {
    waiters: usize,
    state: watch::Sender<Wake>,
}

type Channels = Arc<Mutex<HashMap<String, Entry>>>;

enum Request {
    Subscribe(String),
    Unsubscribe(String),
}

/// The shared subscriber. The connection opens on the first waiter, subscribes to a channel
/// while at least one waiter waits on it, and reconnects (resubscribing) after failures.
#[derive(Debug, Clone)]
pub(crate) struct Subscriber {
    channels: Channels,
    requests: mpsc::UnboundedSender<Request>,
    /// The service's inbox, where a plain server has one.
    inbox: Option<Arc<Inbox>>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("waiters", &self.waiters)
            .finish()
    }
}

impl Subscriber {
    /// Starts the subscriber task; it ends when every clone of this handle is dropped. With
    /// `inbox`, the service's waiters hear on it (subscribed on the first wait, then for good).
    pub(crate) fn start(server: Server, timeout: Duration, inbox: Option<Inbox>) -> Self {
        let channels: Channels = Arc::default();
        let inbox = inbox.map(Arc::new);
        let (requests, receiver) = mpsc::unbounded_channel();
        let task = Task {
            switches: server.switches(),
            server,
            timeout,
            channels: Arc::clone(&channels),
            inbox: inbox.clone(),
            connection: None,
            retry_at: None,
            failures: 0,
        };
        tokio::spawn(task.run(receiver));
        Self {
            channels,
            requests,
            inbox,
        }
    }

    /// The service's inbox, if it has one.
    pub(crate) fn inbox(&self) -> Option<&Arc<Inbox>> {
        self.inbox.as_ref()
    }

    /// Subscribes to the service's inbox, the first time only (then for the service's life);
    /// its registrations turn live when the server confirms. No I/O here: the subscriber task
    /// subscribes.
    pub(crate) fn open_inbox(&self, inbox: &Inbox) {
        if inbox.first_request() {
            let channel = inbox.channel().to_owned();
            lock(&self.channels).insert(
                channel.clone(),
                Entry {
                    // The subscriber's own: the inbox stays subscribed for the service's life.
                    waiters: 1,
                    state: watch::Sender::new(Wake::default()),
                },
            );
            let _ = self.requests.send(Request::Subscribe(channel));
        }
    }

    /// Registers a waiter on `channel`, subscribing if it is the first, and waits up to
    /// `timeout` for the subscription to be confirmed.
    pub(crate) async fn subscribe(&self, channel: &str, timeout: Duration) -> Subscription {
        let receiver = {
            let mut channels = lock(&self.channels);
            let entry = channels.entry(channel.to_owned()).or_insert_with(|| Entry {
                waiters: 0,
                state: watch::Sender::new(Wake::default()),
            });
            entry.waiters += 1;
            if entry.waiters == 1 {
                let _ = self.requests.send(Request::Subscribe(channel.to_owned()));
            }
            entry.state.subscribe()
        };
        // Built before the await below, so a dropped future still unregisters.
        let mut subscription = Subscription {
            subscriber: self.clone(),
            channel: channel.to_owned(),
            wakes: Wakes::new(receiver),
        };
        let receiver = &mut subscription.wakes.0;
        let start = receiver.borrow_and_update().clone();
        if !start.live {
            let confirmed =
                receiver.wait_for(|wake| wake.live || wake.generation != start.generation);
            let _ = tokio::time::timeout(timeout, confirmed).await;
        }
        receiver.mark_unchanged();
        subscription
    }
}

/// One waiter's registration; unregisters (and unsubscribes if last) on drop.
#[derive(Debug)]
pub(crate) struct Subscription {
    subscriber: Subscriber,
    channel: String,
    wakes: Wakes,
}

impl std::ops::Deref for Subscription {
    type Target = Wakes;

    fn deref(&self) -> &Wakes {
        &self.wakes
    }
}

impl std::ops::DerefMut for Subscription {
    fn deref_mut(&mut self) -> &mut Wakes {
        &mut self.wakes
    }
}

/// The wake-ups one waiter hears, on a channel of its own, its object's, or its service's
/// inbox.
#[derive(Debug)]
pub(crate) struct Wakes(watch::Receiver<Wake>);

impl Wakes {
    pub(crate) fn new(receiver: watch::Receiver<Wake>) -> Self {
        Self(receiver)
    }

    /// Whether the server confirmed the subscription and the connection is up.
    pub(crate) fn live(&self) -> bool {
        self.0.borrow().live
    }

    /// Waits for the next wake-up (a release, or a change of the connection's health) and
    /// returns it.
    pub(crate) async fn changed(&mut self) -> Wake {
        if self.0.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
        self.0.borrow_and_update().clone()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut channels = lock(&self.subscriber.channels);
        let Some(entry) = channels.get_mut(&self.channel) else {
            return;
        };
        entry.waiters -= 1;
        if entry.waiters == 0 {
            channels.remove(&self.channel);
            let _ = self
                .subscriber
                .requests
                .send(Request::Unsubscribe(self.channel.clone()));
        }
    }
}

fn lock(channels: &Channels) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
    channels.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The task that owns the pub/sub connection.
struct Task {
    server: Server,
    /// The Sentinels' master switches: the connection goes to a former master after one.
    switches: Option<watch::Receiver<u64>>,
    timeout: Duration,
    channels: Channels,
    inbox: Option<Arc<Inbox>>,
    connection: Option<PubSub>,
    retry_at: Option<Instant>,
    failures: u32,
}

impl Task {
    async fn run(mut self, mut requests: mpsc::UnboundedReceiver<Request>) {
        loop {
            let retry_at = self.retry_at;
            tokio::select! {
                request = requests.recv() => match request {
                    None => return,
                    Some(Request::Subscribe(channel)) => self.subscribe(&channel).await,
                    Some(Request::Unsubscribe(channel)) => self.unsubscribe(&channel).await,
                },
                event = next_event(&mut self.connection) => match event {
                    Event::Message { channel, next } => self.wake(&channel, true, Some(next)),
                    Event::Dropped { channel } => self.resubscribe(&channel).await,
                    Event::Closed => self.failed(),
                },
                () = switched(&mut self.switches) => self.failed(),
                () = sleep_until(retry_at) => {
                    self.retry_at = None;
                    self.resubscribe_all().await;
                }
            }
        }
    }

    /// Opens the connection if needed and subscribes to every channel that has waiters.
    async fn resubscribe_all(&mut self) {
        let channels: Vec<String> = lock(&self.channels).keys().cloned().collect();
        if channels.is_empty() {
            return;
        }
        if self.ensure_connected().await {
            for channel in channels {
                self.subscribe(&channel).await;
            }
        }
    }

    async fn ensure_connected(&mut self) -> bool {
        if self.connection.is_some() {
            return true;
        }
        let connecting = PubSub::open(&self.server, self.timeout);
        match tokio::time::timeout(self.timeout, connecting).await {
            Ok(Ok(pubsub)) => {
                self.connection = Some(pubsub);
                true
            }
            Ok(Err(error)) => {
                tracing::debug!(%error, "cannot open the pub/sub connection; waiters poll");
                self.failed();
                false
            }
            Err(_) => {
                self.failed();
                false
            }
        }
    }

    async fn subscribe(&mut self, channel: &str) {
        if !lock(&self.channels).contains_key(channel) || !self.ensure_connected().await {
            return;
        }
        let Some(connection) = self.connection.as_mut() else {
            return;
        };
        match tokio::time::timeout(self.timeout, connection.subscribe(channel)).await {
            Ok(Ok(())) => {
                self.failures = 0;
                self.wake(channel, true, None);
            }
            _ => self.failed(),
        }
    }

    async fn unsubscribe(&mut self, channel: &str) {
        if lock(&self.channels).contains_key(channel) {
            return; // a new waiter came meanwhile: stay subscribed
        }
        let Some(connection) = self.connection.as_mut() else {
            return;
        };
        if !matches!(
            tokio::time::timeout(self.timeout, connection.unsubscribe(channel)).await,
            Ok(Ok(()))
        ) {
            self.failed();
        }
    }

    /// The server ended `channel`'s subscription (its slot moved to another master): its
    /// waiters poll until it is subscribed again, where the slot lives now. The end of a
    /// subscription nobody waits on any more is the client's own.
    async fn resubscribe(&mut self, channel: &str) {
        if !lock(&self.channels).contains_key(channel) {
            return;
        }
        self.wake(channel, false, None);
        self.subscribe(channel).await;
    }

    /// Moves one channel's counter, waking its waiters; a message in the inbox wakes the one
    /// waiter it names.
    fn wake(&self, channel: &str, live: bool, next: Option<Arc<str>>) {
        if let Some(inbox) = self
            .inbox
            .as_ref()
            .filter(|inbox| inbox.channel() == channel)
        {
            inbox.deliver(live, next);
            return;
        }
        if let Some(entry) = lock(&self.channels).get(channel) {
            entry.state.send_modify(|wake| {
                wake.generation += 1;
                wake.live = live;
                wake.next = next;
            });
        }
    }

    /// The connection failed: drop it, tell every waiter to poll, and schedule a reconnect.
    fn failed(&mut self) {
        self.connection = None;
        if let Some(inbox) = &self.inbox {
            inbox.deliver(false, None);
        }
        for entry in lock(&self.channels).values() {
            entry.state.send_modify(|wake| {
                wake.generation += 1;
                wake.live = false;
                wake.next = None;
            });
        }
        let delay = reconnect_backoff().delay(self.failures);
        self.failures = self.failures.saturating_add(1);
        self.retry_at = Some(Instant::now() + delay);
    }
}

/// The connection's next event; pending forever while there is no connection.
async fn next_event(connection: &mut Option<PubSub>) -> Event {
    match connection {
        Some(connection) => connection.next().await,
        None => std::future::pending().await,
    }
}

/// Returns on the Sentinels' next master switch; pending forever without Sentinels.
async fn switched(switches: &mut Option<watch::Receiver<u64>>) {
    let Some(switches) = switches else {
        return std::future::pending().await;
    };
    if switches.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// How long to wait before reconnecting after the `n`-th failure in a row: 50 ms doubling to
/// 1 s, jittered.
fn reconnect_backoff() -> lock_core::Backoff {
    lock_core::Backoff::exponential(Duration::from_millis(50), Duration::from_secs(1))
        .unwrap_or_default()
}
