//! Statistics of one run: percentiles, fairness, handoffs.

use std::time::Duration;

/// One acquisition in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Which client acquired.
    pub client: usize,
    /// From asking to being granted.
    pub wait: Duration,
    /// From asking to having released (acquire + critical section + release).
    pub pair: Duration,
    /// The previous holder (`None` for the run's first grant).
    pub previous: Option<usize>,
    /// Time from the previous holder leaving to this grant.
    pub gap: Option<Duration>,
}

impl Sample {
    /// Whether this grant moved the lock from another client (a handoff).
    pub fn is_handoff(&self) -> bool {
        self.previous
            .is_some_and(|previous| previous != self.client)
    }
}

/// The nearest-rank percentile (`q` in 0..=1) of sorted values; zero when empty.
pub fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Microseconds as a float.
pub fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// p50, p99 and max in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spread {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Maximum.
    pub max_us: f64,
}

impl Spread {
    /// The spread of `values` (any order).
    pub fn of(mut values: Vec<Duration>) -> Self {
        values.sort_unstable();
        Self {
            p50_us: micros(percentile(&values, 0.5)),
            p99_us: micros(percentile(&values, 0.99)),
            max_us: micros(values.last().copied().unwrap_or_default()),
        }
    }
}

/// A run's summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Acquisitions.
    pub ops: u64,
    /// Wall time of the run.
    pub seconds: f64,
    /// Acquisitions (acquire+release pairs) per second.
    pub ops_per_s: f64,
    /// Acquire waits.
    pub wait: Spread,
    /// Acquire+release pair times.
    pub pair: Spread,
    /// Grants whose previous holder was another client.
    pub handoffs: u64,
    /// Gap from a release to the next grant to another client.
    pub handoff: Spread,
    /// Fewest acquisitions by one client.
    pub fewest: u64,
    /// Most acquisitions by one client.
    pub most: u64,
}

/// Summarizes `samples` of a run of `clients` clients that lasted `seconds`.
pub fn summarize(samples: &[Sample], clients: usize, seconds: f64) -> Summary {
    let mut per_client = vec![0u64; clients.max(1)];
    for sample in samples {
        if let Some(count) = per_client.get_mut(sample.client) {
            *count += 1;
        }
    }
    let handoffs: Vec<Duration> = samples
        .iter()
        .filter(|s| s.is_handoff())
        .filter_map(|s| s.gap)
        .collect();
    let ops = samples.len() as u64;
    Summary {
        ops,
        seconds,
        ops_per_s: if seconds > 0.0 {
            ops as f64 / seconds
        } else {
            0.0
        },
        wait: Spread::of(samples.iter().map(|s| s.wait).collect()),
        pair: Spread::of(samples.iter().map(|s| s.pair).collect()),
        handoffs: samples.iter().filter(|s| s.is_handoff()).count() as u64,
        handoff: Spread::of(handoffs),
        fewest: per_client.iter().copied().min().unwrap_or(0),
        most: per_client.iter().copied().max().unwrap_or(0),
    }
}
