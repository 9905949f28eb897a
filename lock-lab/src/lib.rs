//! distlock's lab, unpublished: the chaos suite and what it is made of.
//!
//! - [`chaos`]: fault scenarios against every backend they apply to, run by the `chaos`
//!   program (`scripts/chaos`) and, two trials per cell, by `tests/chaos_short.rs`.
//! - `lock-holder` ([`holder`], [`work`]): a lock holder in a process of its own, for crash,
//!   pause and cross-process tests.
//! - [`claimants`]: permits and read-write holds taken by tasks in several processes, each
//!   hold's interval printed for an occupancy count across them.
//! - [`fence`]: the fenced resource holders write to, in-process or over TCP, and the checker
//!   that judges a history for overlaps, stale writes and late lost signals.
//! - [`curator`]: Java programs compiled against Debian's Curator jars, for interoperability
//!   tests and benchmarks.
//!
//! Programs are found by one rule: tests name them with `CARGO_BIN_EXE_*`; a program finds the
//! others beside its own executable ([`holder::beside_current_exe`]).

pub mod chaos;
pub mod claimants;
pub mod curator;
pub mod fence;
pub mod holder;
pub mod work;
