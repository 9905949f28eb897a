#![doc = include_str!("../README.md")]
// Built without any dialect feature the crate still compiles, refusing every URL; the
// per-dialect plumbing is then unused.
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(unused_variables, dead_code, unreachable_code, unused_imports)
)]

mod admin;
mod builder;
mod claim_change;
mod claim_row;
mod claim_steps;
mod db;
mod dialect;
mod election;
mod error;
#[cfg(test)]
mod future_sizes;
mod held;
#[cfg(feature = "postgres")]
mod listener;
mod lock;
mod pace;
mod settings;
mod steps;
mod table;
mod waiting;
mod wakeups;

pub use builder::SqlLockBuilder;
pub use dialect::Dialect;
pub use lock::SqlLock;
pub use table::TableName;

/// The sqlx version this crate uses, re-exported so users need not pin a second copy.
pub use sqlx;
