//! What keeping many locks held costs: the requests the server serves to keep the holds alive,
//! the round trips the client's renewals take (where the backend counts them), the client's
//! CPU and heap, measured over a window of whole renewal periods while nothing else runs.

use std::time::Duration;

use lock_core::LockGuard;

use crate::BenchResult;
use crate::cpu::process_cpu;
use crate::heap::live_bytes;
use crate::record::Record;
use crate::scenarios::counted::Counted;
use crate::scenarios::waiting::server_counter;
use crate::servers::Servers;

/// How a hold window runs.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// The lease the holds were taken with; they renew every third of it.
    pub lease: Duration,
    /// How long taking every hold may last; a point that takes longer is reported as not
    /// reached, with how far it got.
    pub reach: Duration,
    /// How many renewal periods the window spans.
    pub periods: u32,
}

impl Window {
    /// The renewal period: a third of the lease.
    pub fn period(self) -> Duration {
        self.lease / 3
    }
}

/// Holds `guards` for `window`, adding to `record` the server's requests per renewal period and
/// per held lock, the renewal round trips per period of `service` (where counted), the
/// client's CPU, and how many holds were lost by the end.
///
/// # Cancel safety
///
/// Cancel safe: it only reads counters and sleeps; the guards stay with the caller.
///
/// # Errors
///
/// The server counter's error.
pub async fn measure(
    servers: &Servers,
    backend: &str,
    guards: &[LockGuard],
    window: Window,
    service: &Counted,
    mut record: Record,
) -> BenchResult<(Record, HeapRange)> {
    let held = guards.len().max(1) as f64;
    let seconds = (window.period() * window.periods).as_secs_f64();
    between_batches(&|| service.round_trips(), window.period()).await;
    let requests_before = server_counter(servers, backend).await?;
    let round_trips_before = service.round_trips();
    let cpu_before = process_cpu();
    let heap = sample_heap(window.period() * window.periods).await;
    let cpu_after = process_cpu();
    let round_trips_after = service.round_trips();
    let requests = server_counter(servers, backend)
        .await?
        .saturating_sub(requests_before);
    let periods = f64::from(window.periods);
    record = record
        .with("lease_ms", window.lease.as_millis() as u64)
        .with("hold_window_s", seconds)
        .with(
            "server_requests_per_s_per_lock",
            requests as f64 / seconds / held,
        )
        .with(
            "server_requests_per_renewal_period",
            requests as f64 / periods,
        )
        .with(
            "lost_while_holding",
            guards.iter().filter(|g| g.is_lost()).count() as u64,
        );
    if let (Some(before), Some(after)) = (round_trips_before, round_trips_after) {
        let round_trips = after.saturating_sub(before) as f64;
        record = record.with("round_trips_per_renewal_period", round_trips / periods);
    }
    if let (Some(before), Some(after)) = (cpu_before, cpu_after) {
        let busy = after.saturating_sub(before).as_secs_f64();
        record = record.with("client_cpu_ms_per_s", busy * 1e3 / seconds);
    }
    Ok((record, heap))
}

/// Waits until a batch of renewals goes out (`round_trips`, the service's count, moves),
/// then half a renewal `period`. The batches come a whole period apart, so a window of whole
/// periods that starts there neither starts nor ends on one and counts each batch in it once;
/// a window starting on a batch would count one batch more or less, by when the counter moved.
/// A service that counts no round trips starts at once.
async fn between_batches(round_trips: &dyn Fn() -> Option<u64>, period: Duration) {
    let Some(counted) = round_trips() else {
        return;
    };
    let limit = tokio::time::Instant::now() + period * 2;
    while round_trips() == Some(counted) && tokio::time::Instant::now() < limit {
        tokio::time::sleep(BATCH_POLL).await;
    }
    tokio::time::sleep(period / 2).await;
}

/// How often [`between_batches`] looks for a batch.
const BATCH_POLL: Duration = Duration::from_millis(5);

/// The process's live heap over a hold window: least between renewals, most while a batch of
/// renewals is in flight.
#[derive(Debug, Clone, Copy)]
pub struct HeapRange {
    /// The least reading, in bytes.
    pub least: usize,
    /// The greatest reading, in bytes.
    pub most: usize,
}

/// How often the window reads the heap: often enough to see between renewal batches.
const HEAP_SAMPLE: Duration = Duration::from_millis(50);

/// Waits `length`, reading the live heap every [`HEAP_SAMPLE`].
async fn sample_heap(length: Duration) -> HeapRange {
    let end = tokio::time::Instant::now() + length;
    let first = live_bytes();
    let mut range = HeapRange {
        least: first,
        most: first,
    };
    while tokio::time::Instant::now() < end {
        tokio::time::sleep_until(end.min(tokio::time::Instant::now() + HEAP_SAMPLE)).await;
        let now = live_bytes();
        range.least = range.least.min(now);
        range.most = range.most.max(now);
    }
    range
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    const PERIOD: Duration = Duration::from_secs(10);

    /// Counts a batch every period, each 5 ms into it (the gatherer's delay), from now.
    fn batches() -> Arc<AtomicU64> {
        let count = Arc::new(AtomicU64::new(0));
        let counting = Arc::clone(&count);
        tokio::spawn(async move {
            let start = tokio::time::Instant::now() + Duration::from_millis(5);
            for period in 0..10 {
                tokio::time::sleep_until(start + PERIOD * period).await;
                counting.fetch_add(1, Ordering::Relaxed);
            }
        });
        count
    }

    /// A window that would start just before a batch, and end (reading its counters) just after
    /// the batch two periods later, counts two batches, not three.
    #[tokio::test(start_paused = true)]
    async fn a_window_of_two_periods_counts_two_batches_whatever_its_phase() {
        let count = batches();
        let read = || Some(count.load(Ordering::Relaxed));
        between_batches(&read, PERIOD).await;
        let before = count.load(Ordering::Relaxed);
        tokio::time::sleep(PERIOD * 2 + Duration::from_millis(10)).await;
        let counted = count.load(Ordering::Relaxed) - before;
        assert_eq!(
            counted, 2,
            "a window of two periods counted {counted} batches"
        );
    }
}
