//! Network faults between a client and its server, in user space (kernel `netem` is not
//! available everywhere): a TCP proxy that adds latency, drops one direction, blackholes,
//! stalls connections or resets them.

mod proxy;

pub use proxy::{Fault, FaultProxy};
