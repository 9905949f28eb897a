#![doc = include_str!("../README.md")]

mod connect;
mod memory_registry;

pub use connect::{SCHEMES, connect};
pub use lock_core::*;
