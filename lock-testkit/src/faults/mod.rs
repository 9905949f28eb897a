//! Fault tools and the safety checker: a TCP fault proxy, a fenced resource, and a history of
//! grants and writes judged for overlaps, stale writes, token order and timely lost signals.

mod clock;
mod fenced;
mod history;
mod proxy;

pub use clock::monotonic_ns;
pub use fenced::{FencedResource, Write};
pub use history::{Event, History, Hold, HoldEvent, Verdict, check, holds};
pub use proxy::{Fault, FaultProxy};
