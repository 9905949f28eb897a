#![doc = include_str!("../README.md")]

pub mod broken;
pub mod conformance;
pub mod faults;
pub mod holds;
pub mod intervals;
pub mod renewal_memory;
pub mod servers;
pub mod tls;

mod blackhole;
mod occupancy;
mod overlap;
mod require;
mod targets;
mod timing;

pub use blackhole::Blackhole;
pub use conformance::ConformanceTarget;
pub use occupancy::Occupancy;
pub use overlap::{Entry, OverlapDetector};
pub use require::{ServerError, require, servers_required};
pub use targets::{BrokenTarget, MemoryTarget};
pub use timing::{scaled, scaled_ms, timing};
