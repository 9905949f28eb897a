#![doc = include_str!("../README.md")]

pub mod broken;
pub mod chaos;
pub mod conformance;
pub mod curator;
pub mod faults;
pub mod holder;
pub mod servers;
pub mod work;

mod blackhole;
mod require;
mod targets;
mod timing;

pub use blackhole::Blackhole;
pub use conformance::ConformanceTarget;
pub use require::{ServerError, require, servers_required};
pub use servers::free_port;
pub use targets::{BrokenTarget, MemoryTarget};
pub use timing::{scaled, scaled_ms, timing};
