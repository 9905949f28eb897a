//! One result as one JSON line.

use serde_json::{Map, Value, json};

use crate::stats::{Spread, Summary};

/// One measured result: the fields every line has, plus scenario-specific ones in `extra`.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The scenario id (`latency`, `contention`, `waiting`, `herd`, `crash`, `failover`, `many`).
    pub scenario: String,
    /// The system measured: `distlock` or a peer library, with its version.
    pub system: String,
    /// The server or backend (`redis`, `zookeeper`, `postgres`, ...).
    pub backend: String,
    /// Concurrent clients.
    pub clients: usize,
    /// Operations counted.
    pub ops: u64,
    /// Wall time.
    pub seconds: f64,
    /// Operations per second.
    pub ops_per_s: f64,
    /// Median latency: acquire wait in contended runs, acquire+release pair in `latency`.
    pub p50_us: f64,
    /// 99th percentile of the same.
    pub p99_us: f64,
    /// Maximum of the same.
    pub max_us: f64,
    /// Critical-section overlaps the detector counted.
    pub overlaps: u64,
    /// Grants whose previous holder was another client.
    pub handoffs: u64,
    /// Scenario-specific fields.
    pub extra: Map<String, Value>,
}

impl Record {
    /// An empty record of `scenario` for `system` on `backend`.
    pub fn new(scenario: &str, system: &str, backend: &str) -> Self {
        Self {
            scenario: scenario.to_owned(),
            system: system.to_owned(),
            backend: backend.to_owned(),
            clients: 0,
            ops: 0,
            seconds: 0.0,
            ops_per_s: 0.0,
            p50_us: 0.0,
            p99_us: 0.0,
            max_us: 0.0,
            overlaps: 0,
            handoffs: 0,
            extra: Map::new(),
        }
    }

    /// Fills the common fields from a run's summary, with `latency` as the p50/p99/max.
    #[must_use]
    pub fn summary(mut self, clients: usize, summary: &Summary, latency: Spread) -> Self {
        self.clients = clients;
        self.ops = summary.ops;
        self.seconds = summary.seconds;
        self.ops_per_s = summary.ops_per_s;
        self.p50_us = latency.p50_us;
        self.p99_us = latency.p99_us;
        self.max_us = latency.max_us;
        self.handoffs = summary.handoffs;
        self.with("fewest", summary.fewest)
            .with("most", summary.most)
            .with("handoff_p50_us", round(summary.handoff.p50_us))
            .with("handoff_p99_us", round(summary.handoff.p99_us))
    }

    /// Adds a scenario-specific field.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_owned(), value.into());
        self
    }

    /// A scenario-specific number, if present.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.extra.get(key).and_then(Value::as_f64)
    }

    /// A scenario-specific list of numbers, if present and all numbers.
    pub fn numbers(&self, key: &str) -> Option<Vec<f64>> {
        let list = self.extra.get(key)?.as_array()?;
        list.iter().map(Value::as_f64).collect()
    }

    /// A scenario-specific string, if present.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.extra.get(key).and_then(Value::as_str)
    }

    /// The JSON object of this record.
    pub fn to_json(&self) -> Value {
        let mut object = json!({
            "scenario": self.scenario,
            "system": self.system,
            "backend": self.backend,
            "clients": self.clients,
            "ops": self.ops,
            "seconds": round(self.seconds),
            "ops_per_s": round(self.ops_per_s),
            "p50_us": round(self.p50_us),
            "p99_us": round(self.p99_us),
            "max_us": round(self.max_us),
            "overlaps": self.overlaps,
            "handoffs": self.handoffs,
        });
        if let Value::Object(map) = &mut object {
            for (key, value) in &self.extra {
                map.insert(key.clone(), value.clone());
            }
        }
        object
    }

    /// The record a JSON object written by [`to_json`](Record::to_json) describes; `None` when a
    /// common field is missing.
    pub fn from_json(value: &Value) -> Option<Self> {
        let map = value.as_object()?;
        let text = |key: &str| map.get(key)?.as_str().map(str::to_owned);
        let number = |key: &str| map.get(key)?.as_f64();
        let count = |key: &str| map.get(key)?.as_u64();
        let common = [
            "scenario",
            "system",
            "backend",
            "clients",
            "ops",
            "seconds",
            "ops_per_s",
            "p50_us",
            "p99_us",
            "max_us",
            "overlaps",
            "handoffs",
        ];
        let extra = map
            .iter()
            .filter(|(key, _)| !common.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Some(Self {
            scenario: text("scenario")?,
            system: text("system")?,
            backend: text("backend")?,
            clients: usize::try_from(count("clients")?).ok()?,
            ops: count("ops")?,
            seconds: number("seconds")?,
            ops_per_s: number("ops_per_s")?,
            p50_us: number("p50_us")?,
            p99_us: number("p99_us")?,
            max_us: number("max_us")?,
            overlaps: count("overlaps")?,
            handoffs: count("handoffs")?,
            extra,
        })
    }

    /// The record as one JSON line (no trailing newline).
    pub fn to_line(&self) -> String {
        self.to_json().to_string()
    }
}

/// Rounds to three decimals, so JSON lines stay readable.
pub fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}
