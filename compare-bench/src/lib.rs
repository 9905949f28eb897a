#![doc = include_str!("../README.md")]

pub mod chart;
pub mod contend;
pub mod counters;
pub mod cpu;
pub mod cpu_use;
pub mod heap;
pub mod holder;
pub mod machine;
pub mod monitor;
pub mod peers;
pub mod record;
pub mod report;
pub mod scenarios;
pub mod servers;
pub mod stats;

/// Errors of the runner: any failure ends the scenario that met it, with its message.
pub type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// The runner's result type.
pub type BenchResult<T> = Result<T, BenchError>;
