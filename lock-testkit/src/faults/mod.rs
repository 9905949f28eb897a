//! Fault tools and the safety checker: a TCP fault proxy, a fenced resource (in-process or
//! served over TCP to holder processes), and a history of grants and writes judged for
//! overlaps, stale writes, token order and timely lost signals.

mod clock;
mod fence_server;
mod fenced;
mod history;
mod proxy;

pub use clock::monotonic_ns;
pub use fence_server::{FenceClient, FenceServer};
pub use fenced::{FencedResource, Write};
pub use history::{Event, History, Hold, HoldEvent, Verdict, check, holds};
pub use proxy::{Fault, FaultProxy};
