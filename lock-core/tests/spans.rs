//! The engine's and the guard's spans reach a subscriber that wants them, with their fields,
//! and the work they describe runs inside them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use lock_core::{DistributedLockExt, MemoryLock};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Every span opened, as its name, every field recorded into it later, as `NAME.FIELD`, and
/// every time it was entered, as `NAME>`.
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
    names: Arc<Mutex<Vec<&'static str>>>,
    next: Arc<AtomicU64>,
}

impl Recorder {
    fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

struct FieldNames<'a>(&'a mut Vec<String>, &'static str);

impl Visit for FieldNames<'_> {
    fn record_debug(&mut self, field: &Field, _value: &dyn std::fmt::Debug) {
        self.0.push(format!("{}.{}", self.1, field.name()));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _metadata: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let name = span.metadata().name();
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        names.push(name);
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(name.to_owned());
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let index = usize::try_from(span.into_u64() - 1).unwrap_or(usize::MAX);
        let names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        let name = names.get(index).copied().unwrap_or("?");
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        values.record(&mut FieldNames(&mut seen, name));
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, _event: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        let index = usize::try_from(span.into_u64() - 1).unwrap_or(usize::MAX);
        let names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        let name = names.get(index).copied().unwrap_or("?");
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.push(format!("{name}>"));
    }

    fn exit(&self, _span: &Id) {}
}

#[tokio::test]
async fn acquisitions_and_releases_are_spans_with_their_outcome() {
    let recorder = Recorder::default();
    let _installed = tracing::subscriber::set_default(recorder.clone());
    let lock = MemoryLock::new();
    let guard = lock.acquire("spans/observed").await.expect("acquire");
    guard.release().await.expect("release");
    let seen = recorder.seen();
    for expected in [
        "distlock.acquire",
        "distlock.acquire>",
        "distlock.acquire.tries",
        "distlock.acquire.fencing_token",
        "distlock.acquire.outcome",
        "distlock.release",
        "distlock.release>",
        "distlock.release.outcome",
    ] {
        assert!(
            seen.iter().any(|name| name == expected),
            "no {expected} among {seen:?}"
        );
    }
}
